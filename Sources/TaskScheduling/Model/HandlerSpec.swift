/// What runs when a task fires: a command from a config file, or a Swift closure registered in code.
public enum HandlerSpec: Hashable, Sendable {
    case command(CommandSpec)
    case swift

    /// `command` or `swift`, as `taskctl list` shows it.
    public var label: String {
        switch self {
        case .command: return "command"
        case .swift: return "swift"
        }
    }
}
