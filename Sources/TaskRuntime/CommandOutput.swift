/// What a command's output turns into: its lines, and a count where the rate limit dropped some.
public enum CommandOutput: Hashable, Sendable {
    case line(OutputLine)
    /// This many lines were dropped by the rate limit since the last report.
    case dropped(lines: Int)
    /// This many lines the run keeper could not hand to journald, which fell behind.
    case shed(lines: Int)
    /// A line the command wrote to its notify descriptor (`TASKD_NOTIFY_FD`, fd 3), such as
    /// `PROGRESS=3/250` or `STATUS=fetching page 4`; never rate-limited nor journaled as output.
    case notification(String)
}
