/// The averaging window of a pressure condition: the three the kernel reports (`avg10`,
/// `avg60`, `avg300`), written as systemd writes them.
public enum PressureWindow: String, Hashable, Sendable, CaseIterable {
    case tenSeconds = "10sec"
    case oneMinute = "1min"
    case fiveMinutes = "5min"

    /// The field of a `/proc/pressure` line that holds this average.
    public var field: String {
        switch self {
        case .tenSeconds: return "avg10"
        case .oneMinute: return "avg60"
        case .fiveMinutes: return "avg300"
        }
    }
}
