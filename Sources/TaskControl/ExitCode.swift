/// taskctl's exit codes (docs/control-protocol.md, "Exit codes").
public enum ExitCode: Int32, Sendable {
    case success = 0
    /// With `--wait`: a run did not complete.
    case runDidNotComplete = 1
    case usage = 2
    /// The target names no task (or several where one is needed).
    case noSuchTask = 3
    /// Nothing answers on the socket, or the daemon is stopping.
    case unreachable = 4
    case permissionDenied = 5
}
