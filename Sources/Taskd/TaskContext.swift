import TaskScheduling

/// What a Swift handler knows about its run (the in-process counterpart of a command's `TASKD_*`
/// environment). Cancellation arrives as Swift task cancellation `cancelGrace` before `deadline`.
public struct TaskContext<Payload: Sendable>: Sendable {
    /// The task's name (its identifier).
    public var task: String
    public var kind: String
    /// 32 hex digits; the journal's `TASK_RUN_ID`.
    public var runID: String
    /// `startup`, `timer`, `wake`, `retry` or `catchup`.
    public var trigger: String
    /// 1 for the first attempt, then 2, 3, … for retries (`MaxAttempts=`).
    public var attempt: Int
    /// The `--id` of the wake (SwiftUI's `task(id:)` value), if any.
    public var wakeID: String?
    /// The wake's payload decoded as `Payload`; nil when the trigger carried none.
    public var payload: Payload?
    /// The wake's payload as JSON text, if any.
    public var payloadJSON: String?
    /// The run's whole budget.
    public var budget: Duration
    /// How long the run waited for a free slot or behind another run before it started.
    public var waited: Duration
    /// The budget's end as CLOCK_REALTIME microseconds since the epoch (`TASKD_DEADLINE_USEC`).
    public var deadlineRealtimeUSec: UInt64
    /// When the run must be done, on the continuous clock.
    public var deadline: ContinuousClock.Instant

    init(run: Run, payload: Payload?, now: ClockReading) {
        task = run.key.identifier
        kind = run.key.kind
        runID = run.id
        trigger = run.trigger.rawValue
        attempt = run.attempt
        wakeID = run.wakeID
        self.payload = payload
        payloadJSON = run.payload
        budget = .microseconds(Int64(clamping: run.budget.microseconds))
        waited = .microseconds(Int64(clamping: run.waited ?? 0))
        deadlineRealtimeUSec = run.deadlineRealtime ?? now.realtime &+ run.budget.microseconds
        let left = run.killAt > now.monotonic ? run.killAt - now.monotonic : 0
        deadline = ContinuousClock.now.advanced(by: .microseconds(Int64(clamping: left)))
    }
}
