/// Where a task runs when several hosts share its configuration (`Fleet=`): on every host, once
/// across the fleet per timer slot, or on at most N hosts at a time. Coordinated through etcd.
public enum FleetMode: Hashable, Sendable, CustomStringConvertible {
    /// Each host runs the task on its own (the default): no coordination.
    case host
    /// One host of the fleet runs each timer slot (a calendar elapse, named by its nominal time).
    case once
    /// At most this many hosts of the fleet run the task at a time; the others wait their turn.
    case max(Int)

    /// `host`, `once` or `max:N` (N from 1 to 1000); nil for anything else.
    public init?(parsing text: String) {
        switch text {
        case "host": self = .host
        case "once": self = .once
        default:
            guard text.hasPrefix("max:"), let n = Int(text.dropFirst(4)), (1...1000).contains(n) else { return nil }
            self = .max(n)
        }
    }

    public var description: String {
        switch self {
        case .host: return "host"
        case .once: return "once"
        case .max(let n): return "max:\(n)"
        }
    }
}
