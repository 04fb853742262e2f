import TaskScheduling

/// What a Swift handler knows about its run (the in-process counterpart of a command's `TASKD_*`
/// environment). Cancellation arrives as Swift task cancellation `cancelGrace` before `deadline`.
public struct TaskContext: Sendable {
    /// The task's name (its identifier).
    public var task: String
    public var kind: String
    /// 32 hex digits; the journal's `TASK_RUN_ID`.
    public var runID: String
    /// `startup`, `timer`, `wake`, `retry` or `catchup`.
    public var trigger: String
    public var attempt: Int
    /// The `--id` of the wake (SwiftUI's `task(id:)` value), if any.
    public var wakeID: String?
    /// The wake payload as JSON text, if any.
    public var payload: String?
    /// The run's whole budget.
    public var budget: Duration
    /// The budget's end as CLOCK_REALTIME microseconds since the epoch (`TASKD_DEADLINE_USEC`).
    public var deadlineRealtimeUSec: UInt64
    /// When the run must be done, on the continuous clock.
    public var deadline: ContinuousClock.Instant

    init(run: Run, now: ClockReading) {
        task = run.key.identifier
        kind = run.key.kind
        runID = run.id
        trigger = run.trigger.rawValue
        attempt = run.attempt
        wakeID = run.wakeID
        payload = run.payload
        budget = .microseconds(Int64(clamping: run.budget.microseconds))
        deadlineRealtimeUSec = run.deadlineRealtime
        let left = run.killAt > now.monotonic ? run.killAt - now.monotonic : 0
        deadline = ContinuousClock.now.advanced(by: .microseconds(Int64(clamping: left)))
    }
}

/// A Swift handler: an async closure that does the task's work and honours cancellation.
public typealias TaskHandler = @Sendable (TaskContext) async throws -> Void
