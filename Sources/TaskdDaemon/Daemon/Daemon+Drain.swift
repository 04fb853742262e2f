import TaskScheduling
import TaskdProtocol

/// `taskctl drain`: before a restart or an upgrade, no new run starts and the caller learns when
/// the runs in progress have ended. The drain is the scheduler's (`Scheduler.drain`); the daemon
/// answers the calls that wait on it.
extension Daemon {
    /// Starts a drain, if none is in progress; `reply` gets whether no run is active, and the runs
    /// still active, once none is or `timeout` µs have passed. Only root or taskd's own user.
    package func drain(
        timeout: UInt64?, peer: PeerCredentials, reply: @escaping @Sendable (Bool, [RunInfo]) -> Void
    ) throws {
        try checkAdmin(peer)
        if !scheduler.drain() {
            let active = scheduler.activeCount
            journal.daemon(
                .drainStarted, 5, "draining: no new run starts; \(active) run(s) active",
                [("TASKD_ACTIVE_RUNS", String(active))])
        }
        drainCalls.add(deadline: timeout.map { clock.now().monotonic &+ $0 }, reply: reply)
        afterChange()  // answers it at once if no run is active; STATUS= says "Draining"

    }

    /// Ends the drain: the runs that waited for it start as slots allow; returns how many waited.
    /// A `Drain` call still waiting is answered at once, not drained. Only root or taskd's own user.
    package func endDrain(peer: PeerCredentials) throws -> Int {
        try checkAdmin(peer)
        guard scheduler.isDraining else { return 0 }
        let waiting = scheduler.waitingToStart
        journal.daemon(
            .drainEnded, 5, "drain ended: \(waiting) run(s) that waited start",
            [("TASKD_WAITING_RUNS", String(waiting))])
        answerDrainCalls(ended: true)
        perform(scheduler.endDrain(at: clock.now()))
        return waiting
    }

    /// Answers the `Drain` calls that are due: every one once no run is active (or the drain
    /// ended), else those whose timeout passed; arms the drain timer for the next timeout.
    func answerDrainCalls(ended: Bool = false) {
        guard !drainCalls.isEmpty else { return }
        let drained = scheduler.activeCount == 0
        let due = drainCalls.take(at: clock.now().monotonic, all: drained || ended)
        if !due.isEmpty {
            let active = scheduler.runs.values.filter(\.isActive).sorted { $0.id < $1.id }
                .map { RunInfo($0, disposition: .started) }
            for reply in due { reply(drained, active) }
        }
        if drainTimer == nil, drainCalls.nextDeadline != nil {
            drainTimer = clock.makeTimer { [weak self] in self?.onLoop { $0.answerDrainCalls() } }
        }
        drainTimer?.arm(at: drainCalls.nextDeadline)
    }
}
