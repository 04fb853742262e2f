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
