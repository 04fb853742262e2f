import TaskScheduling

/// A run in progress as one image of taskd hands it to the next (`taskctl upgrade`): every field
/// the scheduler needs to go on with it, instants as they were (CLOCK_MONOTONIC goes on across
/// `execve`). Values of `UInt64.max` (no deadline) are left out, as JSON numbers stop at 2⁶³.
package struct RunSnapshot: Codable, Sendable, Hashable {
    var id: String
    var kind: String
    var identifier: String
    var trigger: String
    var attempt: Int
    var wakeID: String?
    var previousAttemptID: String?
    var payload: String?
    var queued: [UInt64]
    var scheduledRealtime: UInt64
    var started: [UInt64]
    var budget: UInt64?
    var cancelGrace: UInt64?
    var inProcess: Bool
    var blocksSleep: Bool
    var cancelAt: UInt64?
    var killAt: UInt64?
    /// `running`, or `cancelling`/`killed` with `reason`.
    var phase: String
    var reason: String?
    var fenced: Bool
    var records: [String]
    var progressCompleted: Int64?
    var progressTotal: Int64?
    var progressStatus: String?
    var progressReportedAt: UInt64?
    var progressTimeout: UInt64
    var progressToldAt: UInt64?
    var progressUntold: Bool
    /// A fleet run's claim (`Fleet=once`, `max:N`): its holder and fence token.
    var fleetHost: String?
    var fenceToken: UInt64?

    /// Nil for a run that has not started or has ended: only active runs are handed over.
    init?(_ run: Run) {
        guard let started = run.started, run.isActive else { return nil }
        func finite(_ v: UInt64) -> UInt64? { v <= UInt64(Int64.max) ? v : nil }
        id = run.id
        kind = run.key.kind
        identifier = run.key.identifier
        trigger = run.trigger.rawValue
        attempt = run.attempt
        wakeID = run.wakeID
        previousAttemptID = run.previousAttemptID
        payload = run.payload
        queued = [run.queued.monotonic, run.queued.realtime]
        scheduledRealtime = run.scheduledRealtime
        self.started = [started.monotonic, started.realtime]
        budget = finite(run.budget.microseconds)
        cancelGrace = finite(run.cancelGrace.microseconds)
        inProcess = run.inProcess
        blocksSleep = run.blocksSleep
        cancelAt = finite(run.cancelAt)
        killAt = finite(run.killAt)
        switch run.phase {
        case .queued, .running: phase = "running"
        case .cancelling(let r):
            phase = "cancelling"
            reason = r.rawValue
        case .killed(let r):
            phase = "killed"
            reason = r.rawValue
        }
        fenced = run.fenced
        records = run.records
        progressCompleted = run.progress?.completed
        progressTotal = run.progress?.total
        progressStatus = run.progress?.status
        progressReportedAt = run.progress?.reportedAt
        progressTimeout = run.progressTimeout
        progressToldAt = run.progressToldAt
        progressUntold = run.progressUntold
        fleetHost = run.fleetHost
        fenceToken = run.fenceToken
    }

    /// The run again; nil if a field names what this taskd does not know (a trigger, a reason).
    var run: Run? {
        guard let trigger = Trigger(rawValue: trigger), queued.count == 2, started.count == 2 else { return nil }
        var run = Run(
            id: id, key: TaskKey(kind: kind, identifier: identifier), trigger: trigger, attempt: attempt,
            wakeID: wakeID, payload: payload, queued: ClockReading(monotonic: queued[0], realtime: queued[1]),
            budget: TimeSpan(microseconds: budget ?? .max), cancelGrace: TimeSpan(microseconds: cancelGrace ?? .max),
            inProcess: inProcess)
        run.previousAttemptID = previousAttemptID
        run.scheduledRealtime = scheduledRealtime
        run.started = ClockReading(monotonic: started[0], realtime: started[1])
        run.blocksSleep = blocksSleep
        run.cancelAt = cancelAt ?? .max
        run.killAt = killAt ?? .max
        switch (phase, reason.flatMap(CancelReason.init(rawValue:))) {
        case ("running", _): run.phase = .running
        case ("cancelling", let r?): run.phase = .cancelling(r)
        case ("killed", let r?): run.phase = .killed(r)
        default: return nil
        }
        run.fenced = fenced
        run.records = records
        if let at = progressReportedAt {
            run.progress = RunProgress(
                completed: progressCompleted, total: progressTotal, status: progressStatus, reportedAt: at)
        }
        run.progressTimeout = progressTimeout
        run.progressToldAt = progressToldAt
        run.progressUntold = progressUntold
        run.fleetHost = fleetHost
        run.fenceToken = fenceToken
        return run
    }
}
