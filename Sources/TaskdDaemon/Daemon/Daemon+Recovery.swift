import TaskScheduling

/// What a start finds of a taskd that did not stop cleanly: the runs it left in progress.
extension Daemon {
    /// Records the runs the previous taskd had in progress when it stopped without ending them (a
    /// crash, `kill -9`, the watchdog, a power loss): each ends `failed` now, `failureReason`
    /// `lost`, unless its task's history holds its end already. Those that answer acknowledged
    /// wakes run again through them; the others run again with trigger `resume`. Journaled.
    package func recordLost(_ snapshots: [RunSnapshot]) {
        let now = clock.now()
        var lost: [Run] = []
        for snapshot in snapshots {
            guard var run = snapshot.run, let started = run.started, history.ended(run.id, of: run.key) == nil
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
        journal.daemon(
            .runsLost, 4,
            "\(lost.count) run(s) were in progress when taskd stopped unexpectedly; recorded as failed (lost)",
            [("TASKD_LOST_RUNS", String(lost.count))])
        perform(lost.map { .report(.ended($0)) })
        replay(lost.filter(\.records.isEmpty).map(CutRun.init), after: "crash")
    }
}
