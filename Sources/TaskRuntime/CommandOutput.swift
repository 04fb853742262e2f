/// What a command's output turns into: its lines, and a count where the rate limit dropped some.
public enum CommandOutput: Hashable, Sendable {
    case line(OutputLine)
    /// This many lines were dropped by the rate limit since the last report.
    case dropped(lines: Int)
}
