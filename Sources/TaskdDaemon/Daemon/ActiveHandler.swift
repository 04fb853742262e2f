import TaskRuntime

/// A handler that is running now: a command's process group, or a Swift task.
enum ActiveHandler: Sendable {
    case command(CommandProcess, killSignal: Int32)
    case swift(Task<Void, Never>)
}
