import TaskScheduling

/// Meters one run's output lines against its `OutputRateLimit` in fixed windows (journald's rule):
/// the first `burst` lines of each interval pass, later ones are dropped and counted, and the count
/// is handed back with the first line let through afterwards, or by `finish()`. Pure: the caller
/// passes the monotonic time.
public struct OutputRateLimiter: Sendable {
    public enum Verdict: Hashable, Sendable {
        case pass
        /// Pass this line, after reporting that this many were dropped before it.
        case passAfterDropping(Int)
        case drop
    }

    public let limit: OutputRateLimit
    private var windowStart: UInt64?
    private var passed = 0
    /// Lines dropped and not yet reported.
    public private(set) var dropped = 0

    public init(_ limit: OutputRateLimit) { self.limit = limit }

    /// The verdict for one line seen at monotonic time `now` (µs).
    public mutating func admit(atUSec now: UInt64) -> Verdict {
        if limit.isOff { return .pass }
        if let start = windowStart, now &- start < limit.interval.microseconds {
            // Same window.
        } else {
            windowStart = now
            passed = 0
        }
        guard passed < limit.burst else {
            dropped += 1
            return .drop
        }
        passed += 1
        guard dropped > 0 else { return .pass }
        defer { dropped = 0 }
        return .passAfterDropping(dropped)
    }

    /// The count of dropped lines not yet reported (the stream has ended); resets it.
    public mutating func finish() -> Int {
        defer { dropped = 0 }
        return dropped
    }
}
