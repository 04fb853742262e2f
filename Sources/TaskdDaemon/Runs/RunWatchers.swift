import TaskScheduling
import TaskdProtocol

/// The clients following runs (`wake --wait`, Varlink `Wake` with `more`): each watch hears every
/// later state of its runs, the end only once the history that records it is on disk (the daemon
/// calls `deliverEnded`). A notice of a signal sent to a command's group is held until the run ends
/// or `HeldNotices.delay` later (see `HeldNotices`). Held by the daemon, so used on the loop only (not `Sendable`).
final class RunWatchers: RunEventObserver {
    private var watches: [Int: RunWatch] = [:]
    private var nextID = 0
    private var held = HeldNotices()
    private let clock: any DaemonClock

    init(clock: any DaemonClock) { self.clock = clock }

    /// Follows `runs` from now on.
    func add(_ runs: Set<String>, followRetries: Bool, notify: @escaping @Sendable (RunInfo) -> Void) {
        guard !runs.isEmpty else { return }
        nextID += 1
        watches[nextID] = RunWatch(remaining: runs, notify: notify, followRetries: followRetries)
    }

    /// Whether some watch follows `run` (its end then waits for the disk).
    func follows(_ run: Run) -> Bool { watches.values.contains { $0.follows(run) } }

    func observe(_ event: SchedulerEvent) {
        switch event {
        case .ended(let run):
            // Its end goes out through `deliverEnded`; what was held for it goes now.
            if !held.isEmpty { held.release(run: run.id).forEach(notify) }
        case .cancelling(let run), .killing(let run):
            guard !run.inProcess, watches.values.contains(where: { $0.remaining.contains(run.id) }) else {
                return notify(event)
            }
            held.hold(event, at: clock.now().monotonic)
        default:
            notify(event)
        }
    }

    /// Runs whose end is on disk now: their watchers hear of it.
    func deliverEnded(_ runs: [Run]) {
        for run in runs { notify(.ended(run)) }
    }

    /// When the oldest held notice is due (monotonic µs), if any.
    var nextDue: UInt64? { held.nextDue }

    /// Sends the held notices due at `now`.
    func releaseDue(at now: UInt64) {
        if !held.isEmpty { held.releaseDue(at: now).forEach(notify) }
    }

    private func notify(_ event: SchedulerEvent) {
        for id in watches.keys {
            guard let info = watches[id]!.take(event) else { continue }
            watches[id]!.notify(info)
            if watches[id]!.isDone { watches[id] = nil }
        }
    }
}
