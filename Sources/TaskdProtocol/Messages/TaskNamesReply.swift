/// The reply that names tasks as `kind:identifier` (`Pause`, `Resume`).
public struct TaskNamesReply: VarlinkReplyParameters, Hashable {
    public var tasks: [String]

    public init(tasks: [String]) { self.tasks = tasks }
}
