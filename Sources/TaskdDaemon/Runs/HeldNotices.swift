import TaskScheduling

/// Watchers' notices of a signal just sent to a command's group, held until the run ends or
/// `delay` has passed. Waking a watching client then would take the CPU the signalled group needs
/// to exit: on two CPUs that delayed a killed command's end by about 0.15 ms (bench/PROFILING.md's
/// history, twelfth round). Only the stream to watchers waits; the journal and `Status` tell the phase at once.
struct HeldNotices {
    /// How long a notice waits at most, in microseconds: far longer than a small group takes to
    /// die (0.2–0.5 ms here), short enough that no one watching notices.
    static let delay: UInt64 = 2_000

    /// Held notices, oldest first, each with the monotonic time it goes out at the latest.
    private var held: [(due: UInt64, event: SchedulerEvent)] = []

    /// When the oldest held notice is due (monotonic µs); nil when none is held.
    var nextDue: UInt64? { held.first?.due }

    var isEmpty: Bool { held.isEmpty }

    /// Holds `event` until its run ends or `delay` after `now`.
    mutating func hold(_ event: SchedulerEvent, at now: UInt64) {
        held.append((now &+ Self.delay, event))
    }

    /// The notices held for run `id`, in order, which no longer wait: the run ended.
    mutating func release(run id: String) -> [SchedulerEvent] {
        let released = held.filter { $0.event.run.id == id }.map(\.event)
        if !released.isEmpty { held.removeAll { $0.event.run.id == id } }
        return released
    }

    /// The notices due at or before `now`, in order, which no longer wait.
    mutating func releaseDue(at now: UInt64) -> [SchedulerEvent] {
        let count = held.prefix { $0.due <= now }.count
        let released = held.prefix(count).map(\.event)
        held.removeFirst(count)
        return released
    }
}
