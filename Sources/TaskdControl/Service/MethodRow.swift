import TaskdProtocol

/// One row of the method table: a method's name, and the handler that gets its parameters decoded
/// to the method's type (a bad one is a `ParameterError`) and serves them on the scheduler's actor.
public struct MethodRow<Scheduler: SchedulerControl>: Sendable {
    public let name: String
    let serve: @Sendable (VarlinkCall, any ReplyChannel, isolated Scheduler) throws -> Void

    public init<Method: VarlinkMethod>(
        _ method: Method.Type,
        _ handler: @escaping @Sendable (Method.Parameters, MethodCall<Method.Reply>, isolated Scheduler) throws -> Void
    ) {
        name = Method.name
        serve = { call, channel, scheduler in
            let parameters = try Method.Parameters(parameters: call.parameters)
            try handler(parameters, MethodCall(channel: channel, more: call.more), scheduler)
        }
    }
}
