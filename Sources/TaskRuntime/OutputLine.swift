/// One line a command wrote, with the stream it came from and its journal priority.
public struct OutputLine: Hashable, Sendable {
    public enum Stream: String, Sendable, Codable {
        case stdout, stderr
        /// The notify descriptor (`TASKD_NOTIFY_FD`): `PROGRESS=`/`STATUS=` lines, not output.
        case notify
    }

    public var stream: Stream
    /// syslog priority 0–7: 6 (info) unless the line began with a `<N>` prefix, as `sd_journal_stream_fd` reads it.
    public var priority: Int
    public var text: String
}

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
