import TaskScheduling

/// The `TaskInfo` type of the IDL: a task, its run in progress, its last result and next elapse.
public struct TaskInfo: Hashable, Sendable {
    public var name: String
    public var kind: String
    public var description: String
    public var handler: String
    public var budgetUSec: UInt64
    public var cancelGraceUSec: UInt64
    public var current: RunInfo?
    public var last: RunInfo?
    public var nextElapseUSec: UInt64?
    public var lastTriggerUSec: UInt64?

    /// Builds the view of `state`; `now` converts monotonic instants to realtime.
    public init(_ state: TaskState, current: Run?, now: ClockReading) {
        let d = state.definition
        name = d.key.identifier
        kind = d.key.kind
        description = d.description
        handler = d.handler.label
        budgetUSec = d.budget.microseconds
        cancelGraceUSec = d.cancelGrace.microseconds
        self.current = current.map { RunInfo($0) }
        last = state.lastRun.map { RunInfo($0) }
        // A calendar elapse is a wall-clock time already; others map from monotonic time.
        nextElapseUSec = state.nextElapse.map { next in
            guard let calendar = state.calendarDueRealtime,
                next == state.calendarDueMonotonic.map({ $0 &+ state.randomDelay })
            else { return now.realtime(at: next) }
            return calendar &+ state.randomDelay
        }
        lastTriggerUSec = state.lastTrigger?.realtime
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(name), "kind": .string(kind), "description": .string(description),
            "handler": .string(handler), "budgetUSec": .int(Int64(budgetUSec)),
            "cancelGraceUSec": .int(Int64(cancelGraceUSec)),
        ]
        if let current { o["current"] = current.json }
        if let last { o["last"] = last.json }
        if let nextElapseUSec { o["nextElapseUSec"] = .int(Int64(nextElapseUSec)) }
        if let lastTriggerUSec { o["lastTriggerUSec"] = .int(Int64(lastTriggerUSec)) }
        return .object(o)
    }

    public init?(json: JSONValue) {
        guard let name = json["name"]?.stringValue, let kind = json["kind"]?.stringValue else { return nil }
        self.name = name
        self.kind = kind
        description = json["description"]?.stringValue ?? ""
        handler = json["handler"]?.stringValue ?? ""
        budgetUSec = UInt64(json["budgetUSec"]?.intValue ?? 0)
        cancelGraceUSec = UInt64(json["cancelGraceUSec"]?.intValue ?? 0)
        current = json["current"].flatMap(RunInfo.init(json:))
        last = json["last"].flatMap(RunInfo.init(json:))
        nextElapseUSec = json["nextElapseUSec"]?.intValue.map { UInt64($0) }
        lastTriggerUSec = json["lastTriggerUSec"]?.intValue.map { UInt64($0) }
    }
}
