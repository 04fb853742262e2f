import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdProtocol

/// `taskctl drain`: before a restart or an upgrade, no new run starts and the caller learns when
/// the runs in progress have ended. The drain is the scheduler's (`Scheduler.drain`); this
/// component answers the `Drain` calls that wait on it: each once no run is active, or at its
/// deadline with the runs still active.
package final class Drains: DaemonComponent {
    typealias Reply = @Sendable (_ drained: Bool, _ active: [RunInfo]) -> Void

    private var calls: [(deadline: UInt64?, reply: Reply)] = []
    private var timer: (any DaemonTimer)?

    package init(config: LoadedConfig, ports: DaemonPorts) {}

    package static var methods: [MethodRow<Daemon>] {
        [
            MethodRow(SchedulerInterface.Drain.self) { p, call, daemon in
                try daemon.component(Drains.self).drain(timeout: p.timeoutUSec, peer: call.peer, in: daemon) {
                    drained, runs in call.reply(.init(drained: drained, runs: runs))
                }
            },
            MethodRow(SchedulerInterface.EndDrain.self) { _, call, daemon in
                call.reply(.init(waiting: try daemon.component(Drains.self).endDrain(peer: call.peer, in: daemon)))
            },
        ]
    }

    /// Starts a drain, if none is in progress; `reply` gets whether no run is active, and the runs
    /// still active, once none is or `timeout` µs have passed. Only root or taskd's own user.
    func drain(
        timeout: UInt64?, peer: PeerCredentials, in daemon: isolated Daemon, reply: @escaping Reply
    ) throws {
        try daemon.checkAdmin(peer)
        if !daemon.scheduler.drain() {
            let active = daemon.scheduler.activeCount
            daemon.journal.daemon(
                .drainStarted, 5, "draining: no new run starts; \(active) run(s) active",
                [("TASKD_ACTIVE_RUNS", String(active))])
        }
        calls.append((timeout.map { daemon.clock.now().monotonic &+ $0 }, reply))
        daemon.afterChange()  // answers it at once if no run is active; STATUS= says "Draining"
    }

    /// Ends the drain: the runs that waited for it start as slots allow; returns how many waited.
    /// A `Drain` call still waiting is answered at once, not drained. Only root or taskd's own user.
    func endDrain(peer: PeerCredentials, in daemon: isolated Daemon) throws -> Int {
        try daemon.checkAdmin(peer)
        guard daemon.scheduler.isDraining else { return 0 }
        let waiting = daemon.scheduler.waitingToStart
        daemon.journal.daemon(
            .drainEnded, 5, "drain ended: \(waiting) run(s) that waited start",
            [("TASKD_WAITING_RUNS", String(waiting))])
        answer(ended: true, in: daemon)
        daemon.perform(daemon.scheduler.endDrain(at: daemon.clock.now()))
        return waiting
    }

    package func changed(in daemon: isolated Daemon) { answer(in: daemon) }

    /// Answers the calls that are due: every one once no run is active (or the drain ended), else
    /// those whose timeout passed; arms the timer for the next timeout.
    private func answer(ended: Bool = false, in daemon: isolated Daemon) {
        guard !calls.isEmpty else { return }
        let drained = daemon.scheduler.activeCount == 0
        let now = daemon.clock.now().monotonic
        let all = drained || ended
        let isDue: ((deadline: UInt64?, reply: Reply)) -> Bool = { all || ($0.deadline.map { $0 <= now } ?? false) }
        let due = calls.filter(isDue)
        calls.removeAll(where: isDue)
        if !due.isEmpty {
            let active = daemon.scheduler.runs.values.filter(\.isActive).sorted { $0.id < $1.id }
                .map { RunInfo($0, disposition: .started) }
            for call in due { call.reply(drained, active) }
        }
        let next = calls.compactMap(\.deadline).min()
        if timer == nil, next != nil {
            timer = daemon.clock.makeTimer { [weak daemon] in
                daemon?.onLoop { $0.component(Drains.self).answer(in: $0) }
            }
        }
        timer?.arm(at: next)
    }
}
