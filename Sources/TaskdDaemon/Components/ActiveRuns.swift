import TaskScheduling
import TaskdConfig

/// The runs in progress, kept on disk (`ActiveRunsFile`) for a start after a crash, and what such a
/// start finds of a taskd that did not stop cleanly: the runs it left in progress.
package final class ActiveRuns: DaemonComponent {
    private let file: ActiveRunsFile?
    /// Each run in progress's snapshot as it started, and whether the set changed since it was
    /// last handed to the file.
    private var snapshots: [String: RunSnapshot] = [:]
    private var changedSinceSaved = false

    package init(config: LoadedConfig, ports: DaemonPorts) { file = ports.activeRuns }

    package func observe(_ event: SchedulerEvent, in daemon: isolated Daemon) -> Bool {
        guard file != nil else { return true }
        switch event {
        case .started(let run):
            snapshots[run.id] = RunSnapshot(run)
            changedSinceSaved = true
        case .ended(let run):
            if snapshots.removeValue(forKey: run.id) != nil { changedSinceSaved = true }
        case .coalesced(let run, _):
            // It answers one more wake now: the next taskd that takes it over must know.
            if snapshots[run.id] != nil {
                snapshots[run.id] = RunSnapshot(run)
                changedSinceSaved = true
            }
        default: break
        }
        return true
    }

    package func changed(in daemon: isolated Daemon) {
        guard changedSinceSaved, let file else { return }
        changedSinceSaved = false
        file.save(snapshots)
    }

    /// A run taken over from an earlier taskd is in progress here now.
    func adopted(_ snapshot: RunSnapshot) {
        guard file != nil else { return }
        snapshots[snapshot.id] = snapshot
        changedSinceSaved = true
    }

    /// Records the runs the previous taskd had in progress when it stopped without ending them (a
    /// crash, `kill -9`, the watchdog, a power loss): each ends `failed` now, `failureReason`
    /// `lost`, unless its task's history holds its end already. Those that answer acknowledged
    /// wakes run again through them; the others run again with trigger `resume`. Journaled.
    func recordLost(_ snapshots: [RunSnapshot], in daemon: isolated Daemon) {
        let now = daemon.clock.now()
        var lost: [Run] = []
        for snapshot in snapshots {
            guard var run = snapshot.run, let started = run.started, daemon.history.ended(run.id, of: run.key) == nil
            else { continue }
            // The monotonic clock restarts with the machine: its instants are placed again before
            // now by the wall clock, in their order (queued, started, ended).
            let elapsed = min(now.realtime > started.realtime ? now.realtime - started.realtime : 0, now.monotonic)
            let waited = started.monotonic - min(run.queued.monotonic, started.monotonic)
            let startedAt = now.monotonic - elapsed
            run.started = ClockReading(monotonic: startedAt, realtime: started.realtime)
            run.queued = ClockReading(monotonic: startedAt - min(waited, startedAt), realtime: run.queued.realtime)
            run.ended = now
            run.termination = .lost("taskd stopped while it ran: a crash, SIGKILL, the watchdog or a power loss")
            run.outcome = .failed
            lost.append(run)
        }
        guard !lost.isEmpty else { return }
        daemon.journal.daemon(
            .runsLost, 4,
            "\(lost.count) run(s) were in progress when taskd stopped unexpectedly; recorded as failed (lost)",
            [("TASKD_LOST_RUNS", String(lost.count))])
        daemon.perform(lost.map { .report(.ended($0)) })
        daemon.component(Upgrades.self).replay(
            lost.filter(\.records.isEmpty).map(CutRun.init), after: "crash", in: daemon)
    }
}
