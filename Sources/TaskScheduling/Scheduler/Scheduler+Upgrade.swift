/// `taskctl upgrade`: taskd re-executes itself and the runs in progress go on. The old image
/// stops starting runs and cancels its Swift handlers' runs (`beginUpgrade`); the new one takes
/// the command runs over (`adopt`), under the deadlines they had.
extension Scheduler {
    /// An upgrade begins: no new run starts, and each active Swift handler's run is cancelled,
    /// reason `upgrade` (its acknowledged wakes stay on record, to run again in the new image).
    public mutating func beginUpgrade(at now: ClockReading) -> [SchedulerAction] {
        isStopping = true
        var actions: [SchedulerAction] = []
        for id in runs.keys.sorted() {
            guard let run = runs[id], run.isActive, run.inProcess, run.cancelReason == nil else { continue }
            cancel(run, reason: .upgrade, at: now, actions: &actions)
        }
        return endBatch(actions)
    }

    /// The upgrade did not happen (the new image could not be executed): runs start again.
    public mutating func abandonUpgrade(at now: ClockReading) -> [SchedulerAction] {
        guard isStopping else { return [] }
        isStopping = false
        return endBatch(pump(at: now))
    }

    /// The active Swift handlers' runs, which an upgrade waits for.
    public var activeInProcess: Int { runs.values.count { $0.isActive && $0.inProcess } }

    /// Takes over `run`, started by an earlier image of taskd: it goes on under the deadlines it
    /// had (its cancellation, its hard stop, its progress timeout), as its task's current run, or
    /// fenced when its task is gone or has another. False, and nothing changes, for a run that is
    /// not active or is known already.
    @discardableResult
    public mutating func adopt(_ run: Run) -> Bool {
        guard let started = run.started, run.isActive, runs[run.id] == nil else { return false }
        var run = run
        if tasks[run.key]?.currentRunID == nil, tasks[run.key] != nil {
            tasks[run.key]!.currentRunID = run.id
            tasks[run.key]!.lastActivation = started.monotonic
        } else {
            run.fenced = true
        }
        if run.blocksSleep { runsBlockingSleep += 1 } else { runsDelayingSleep += 1 }
        inhibitors.runStarted = true
        runs[run.id] = run
        return true
    }
}
