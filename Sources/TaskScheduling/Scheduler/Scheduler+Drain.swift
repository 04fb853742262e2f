/// `taskctl drain`: no new run starts, so that the runs in progress can end before taskd is
/// restarted or upgraded. Triggers that come meanwhile (timers, wakes, retries) wait as they do
/// for a free slot, and start when the drain ends; a restart ends it too (it is not persisted).
extension Scheduler {
    /// Starts a drain; the runs in progress go on. Returns whether one was in progress already.
    @discardableResult
    public mutating func drain() -> Bool {
        defer { isDraining = true }
        return isDraining
    }

    /// Ends the drain: the runs that waited start, as slots allow.
    public mutating func endDrain(at now: ClockReading) -> [SchedulerAction] {
        guard isDraining else { return [] }
        isDraining = false
        return endBatch(pump(at: now))
    }

    /// The runs that wait for the drain to end (ready to start, holding no slot).
    public var waitingToStart: Int { ready.count }
}
