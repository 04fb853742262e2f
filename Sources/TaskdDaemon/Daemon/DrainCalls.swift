import TaskdProtocol

/// The `Drain` calls waiting for the active runs to end: each is answered once none is active,
/// or at its deadline with the runs still active. Used on the event loop only.
struct DrainCalls {
    typealias Reply = @Sendable (_ drained: Bool, _ active: [RunInfo]) -> Void

    private var calls: [(deadline: UInt64?, reply: Reply)] = []

    var isEmpty: Bool { calls.isEmpty }

    /// The earliest deadline of a waiting call (CLOCK_MONOTONIC µs), if any has one.
    var nextDeadline: UInt64? { calls.compactMap(\.deadline).min() }

    /// Adds a call, answered by `reply`, that waits until `deadline` at most (nil: no limit).
    mutating func add(deadline: UInt64?, reply: @escaping Reply) { calls.append((deadline, reply)) }

    /// Takes the calls to answer at `now`: every one with `all`, else those whose deadline passed.
    mutating func take(at now: UInt64, all: Bool) -> [Reply] {
        let due = calls.filter { all || ($0.deadline.map { $0 <= now } ?? false) }
        calls.removeAll { all || ($0.deadline.map { $0 <= now } ?? false) }
        return due.map(\.reply)
    }
}
