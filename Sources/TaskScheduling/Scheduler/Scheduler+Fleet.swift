/// Runs of fleet tasks (`Fleet=once`, `Fleet=max:N`): the daemon claims a run's slot in etcd after
/// the scheduler started it and before its handler starts, and tells the scheduler how that went.
extension Scheduler {
    /// This host holds the run's slot: its handler starts now, and the run carries the claim.
    public mutating func claimed(runID: String, host: String, token: UInt64?) {
        runs[runID]?.fleetHost = host
        runs[runID]?.fenceToken = token
    }

    /// The run's handler never starts here, and the run ends now: another host holds or ran its
    /// slot (`elsewhere`), etcd could not be reached (`fleet-unavailable`), or it was cancelled
    /// while its claim was pending (it keeps that reason, but for its budget's end, which becomes
    /// `reason`: a handler that never started did not run out of time). Outcome `cancelled`.
    public mutating func notRun(
        runID: String, reason: CancelReason, host: String? = nil, token: UInt64? = nil, at now: ClockReading
    ) -> [SchedulerAction] {
        guard var run = runs[runID], run.started != nil else { return [] }
        run.fleetHost = host ?? run.fleetHost
        run.fenceToken = token ?? run.fenceToken
        var actions: [SchedulerAction] = []
        cancel(run, reason: reason, handlerStarted: false, at: now, actions: &actions)
        return endBatch(actions)
    }

    /// Another host's claim on one of the task's slots (`scheduled`, CLOCK_REALTIME µs) lapsed
    /// before the slot was done: it runs here, trigger `takeover`, as a timer's run would; behind
    /// the task's run in progress, if any (another slot's work: never joined to it).
    public mutating func takeOver(_ key: TaskKey, scheduled: UInt64, at now: ClockReading) -> [SchedulerAction] {
        var actions: [SchedulerAction] = []
        let request = TriggerRequest(trigger: .takeover, scheduled: scheduled, distinct: true)
        _ = trigger(key, request, at: now, actions: &actions)
        return endBatch(actions)
    }
}
