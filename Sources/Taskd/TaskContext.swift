import TaskScheduling
import TaskdDaemon
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// What a Swift handler knows about its run (the in-process counterpart of a command's `TASKD_*`
/// environment). Cancellation arrives as Swift task cancellation `cancelGrace` before `deadline`.
public struct TaskContext<Payload: Sendable>: Sendable {
    /// The task's name (its identifier).
    public var task: String
    public var kind: String
    /// 32 hex digits; the journal's `TASK_RUN_ID`.
    public var runID: String
    /// What started the run: `.startup`, `.timer`, `.wake`, `.retry`, `.catchup` or `.resume`.
    public var trigger: TaskTrigger
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
    /// When the run must be done: its start plus its budget, on taskd's clock as an instant of
    /// `ContinuousClock`. Compare it with `now` (in taskd that is `ContinuousClock.now`; under
    /// `TaskdTesting`'s manual clock it is the test's time, which moves only as the test moves it).
    public var deadline: ContinuousClock.Instant
    /// When its trigger was due, CLOCK_REALTIME µs (`TASKD_SCHEDULED_USEC`): a timer's nominal
    /// elapse (for `catchup`, the calendar time missed while taskd was down), a retry's due time, a
    /// wake's acknowledgement. `scheduledAt` is the same on the continuous clock.
    public var scheduledRealtimeUSec: UInt64
    public var scheduledAt: ContinuousClock.Instant
    /// For a task with `fleet: .once` or `.max(n)`: the fence token of this host's claim on the
    /// run (`TASKD_FENCE_TOKEN`), larger than that of any earlier claim of the slot. Write it with
    /// the work, and refuse a write under a smaller one: a host that lost its claim may still run.
    /// nil for `.host`, and for a run that `FleetUnavailable=local` ran unclaimed.
    public var fenceToken: UInt64?
    /// The host that holds the run's claim (`TASKD_FLEET_HOST`); nil for `.host`.
    public var fleetHost: String?
    /// The checkpoint an earlier run of the task kept (`checkpoint(_:)`), as JSON text; nil when
    /// none is kept (the last run completed) or the task says `.resumeFromStart`.
    public var resumeStateJSON: String?
    /// The run that kept `resumeStateJSON`.
    public var resumedFromRunID: String?
    /// What the handler may ask of taskd (`scheduleNext(after:)`), and its clock.
    let controls: any RunControls

    /// Now, on the clock `deadline` and `scheduledAt` are read on: `ContinuousClock.now` in taskd,
    /// the manual clock under `TaskdTesting`. `deadline - context.now` is the time the run has left.
    public var now: ContinuousClock.Instant { controls.clock.continuousNow }

    /// Asks taskd to run this task again `delay` from now (Apple's `earliestBeginDate`), as a
    /// timer would (trigger `timer`, after the task's random delay). It replaces an earlier
    /// request, is journaled, and survives a restart (a time missed meanwhile runs at start).
    public func scheduleNext(after delay: Duration) { controls.scheduleNext(delay) }

    /// Reports how far the run is: `completed` units of `total` (nil: unknown). Call it as often as
    /// you like: `taskctl status` shows the latest at once, the journal and `wake --wait` hear at
    /// most once a second, and `ProgressTimeoutSec=` counts from the latest.
    public func reportProgress(completed: Int, total: Int? = nil) {
        controls.progress(completed: Int64(completed), total: total.map(Int64.init))
    }

    /// Reports a line of status (`taskctl status`, `wake --wait`, the journal's `TASK_STATUS`;
    /// at most 256 bytes are kept). It counts as progress for `ProgressTimeoutSec=`.
    public func setStatus(_ status: String) { controls.status(status) }

    /// Keeps `state` as the task's checkpoint, on disk before it returns: if this run is cut short
    /// (budget, sleep, a lost condition, a crash, an upgrade, a failure and its retry), the task's
    /// next run gets it as `resumeState`; a run that completes clears it. At most 64 KiB of JSON.
    /// Throws `CheckpointRefused` when it is larger, or the run is no longer its task's own.
    public func checkpoint<State: Encodable>(_ state: State) async throws {
        let json = String(decoding: try JSONValueEncoder().encode(state).bytes, as: UTF8.self)
        if let why = await controls.checkpoint(json) { throw CheckpointRefused(why) }
    }

    /// The checkpoint an earlier run kept, decoded as `State`; nil when there is none. A
    /// checkpoint that does not decode (the type changed) throws.
    public func resumeState<State: Decodable>(as type: State.Type = State.self) throws -> State? {
        guard let resumeStateJSON else { return nil }
        return try JSONValueDecoder().decode(State.self, from: resumeStateJSON)
    }

    /// A context as a handler sees it, for calling a handler's own functions directly in a test;
    /// `TaskdTesting`'s `TaskTestDriver` makes one from a run the way taskd does.
    public init(
        task: String, kind: String = TaskKind.appRefresh, runID: String = String(repeating: "0", count: 32),
        trigger: TaskTrigger = .wake, attempt: Int = 1, wakeID: String? = nil, payload: Payload? = nil,
        payloadJSON: String? = nil, budget: Duration = .seconds(30), waited: Duration = .zero,
        deadline: ContinuousClock.Instant? = nil
    ) {
        self.task = task
        self.kind = kind
        self.runID = runID
        self.trigger = trigger
        self.attempt = attempt
        self.wakeID = wakeID
        self.payload = payload
        self.payloadJSON = payloadJSON
        self.budget = budget
        self.waited = waited
        self.deadline = deadline ?? ContinuousClock.now.advanced(by: budget)
        scheduledAt = ContinuousClock.now
        controls = NoRunControls()
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let realtime = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        let left = ContinuousClock.now.duration(to: self.deadline)
        deadlineRealtimeUSec = realtime &+ TimeSpan(left).microseconds
        scheduledRealtimeUSec = realtime
    }

    init(run: Run, payload: Payload?, now: ClockReading, controls: any RunControls) {
        self.controls = controls
        task = run.key.identifier
        kind = run.key.kind
        runID = run.id
        trigger = run.trigger
        attempt = run.attempt
        wakeID = run.wakeID
        self.payload = payload
        payloadJSON = run.payload
        budget = .microseconds(Int64(clamping: run.budget.microseconds))
        waited = .microseconds(Int64(clamping: run.waited ?? 0))
        deadlineRealtimeUSec = run.deadlineRealtime ?? now.realtime &+ run.budget.microseconds
        // On the daemon's clock (a test's manual one too), not on the real continuous clock.
        deadline = controls.clock.instant(atMonotonic: run.killAt)
        scheduledRealtimeUSec = run.scheduledRealtime
        fenceToken = run.fenceToken
        fleetHost = run.fleetHost
        resumeStateJSON = run.checkpoint
        resumedFromRunID = run.checkpointRunID
        let since = now.realtime >= run.scheduledRealtime ? now.realtime - run.scheduledRealtime : 0
        scheduledAt = controls.clock.instant(atMonotonic: now.monotonic)
            .advanced(by: .microseconds(-Int64(clamping: since)))
    }
}

/// Thrown by `TaskContext.checkpoint(_:)` when taskd does not keep the checkpoint: it is over
/// 64 KiB of JSON, or the run is no longer its task's own (cancelled and replaced, reconfigured).
public struct CheckpointRefused: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) { self.description = description }
}
