/// One run of a task: what started it, its deadlines, its phase, and (once ended) its outcome.
public struct Run: Hashable, Sendable {
    public var id: String
    public var key: TaskKey
    public var trigger: Trigger
    public var attempt: Int
    public var wakeID: String?
    /// The failed run this run retries, or does the work of in place of its retry.
    public var previousAttemptID: String?
    /// The wake payload as JSON text, handed to the handler (stdin for a command).
    public var payload: String?
    /// When the trigger created the run.
    public var queued: ClockReading
    /// When the trigger was due, CLOCK_REALTIME µs (`TASKD_SCHEDULED_USEC`): a timer's nominal
    /// elapse (a calendar time missed while taskd was down, for `catchup`; before the random
    /// delay), a retry's due time, a wake's acknowledgement.
    public var scheduledRealtime: UInt64 = 0
    /// When its handler started; nil while it waits (`queued`) and for a run cancelled before it started.
    public var started: ClockReading?
    public var budget: TimeSpan
    public var cancelGrace: TimeSpan
    /// True for a Swift handler, which is abandoned (not killed) at the hard stop.
    public var inProcess: Bool
    /// True when its task had `Sleep=block` as it started: it holds sleep back, and sleep does not cancel it.
    public var blocksSleep = false
    /// Monotonic instant at which cancellation is signalled (`budget − grace` after the start).
    public var cancelAt: UInt64 = .max
    /// Monotonic instant of the hard stop; moved earlier by a cancel (its grace) but never later.
    public var killAt: UInt64 = .max
    public var phase: RunPhase = .queued
    public var outcome: RunOutcome?
    public var termination: Termination?
    public var ended: ClockReading?
    /// True once the run was detached from its task (cancelled, superseded, removed or reconfigured):
    /// whatever its handler reports later is stale, never the task's last result, never retried.
    public var fenced = false
    /// The acknowledged wakes this run answers for (durable records), settled when it ends.
    public var records: [String] = []
    /// What a Swift handler returned, as JSON text.
    public var result: String?
    /// The checkpoint the run was handed as it started (`ResumeFrom=checkpoint`): the text an
    /// earlier run kept, and that run's id. Set by the daemon as it launches the handler.
    public var checkpoint: String?
    public var checkpointRunID: String?
    /// The conditions the run waits for, before it starts (empty once they hold).
    public var waitingFor: [TaskCondition] = []
    /// The concurrency group (`ConcurrencyGroup=`) whose place the run holds or waits for, and
    /// whether it waits for one.
    public var group: String?
    public var waitingForGroup = false
    /// Runs of the same trigger it waits to end before it starts (`After=`): empty once they have.
    public var after: [String] = []
    /// The conditions whose loss cancelled the run (`ConditionLost=cancel`, reason `condition-lost`).
    public var lostConditions: [TaskCondition] = []
    /// True when the handler ended by itself and successfully after cancellation was signalled
    /// (a Swift handler returned, a command exited 0): done, partially. Such a run is not retried.
    public var partial = false
    /// What a command's run used (CPU, memory, IO), once it ended.
    public var usage: RunUsage?
    /// What the handler last said of its progress, if it did.
    public var progress: RunProgress?
    /// `ProgressTimeoutSec=` of its task when it started, in µs (0: none).
    public var progressTimeout: UInt64 = 0
    /// When a progress report was last told (journal, watchers), and whether a later one waits
    /// to be told (reports are told at most once per `Scheduler.progressInterval`).
    public var progressToldAt: UInt64?
    public var progressUntold = false
    /// The fleet's claim on the run's slot (`Fleet=once`, `Fleet=max:N`): the host that holds or
    /// ran it, and that claim's fence token (an etcd revision: a later claim has a larger one);
    /// nil for a task of `Fleet=host`, and until the claim is decided.
    public var fleetHost: String?
    public var fenceToken: UInt64?

    public init(
        id: String, key: TaskKey, trigger: Trigger, attempt: Int, wakeID: String? = nil, payload: String? = nil,
        queued: ClockReading, budget: TimeSpan, cancelGrace: TimeSpan, inProcess: Bool
    ) {
        self.id = id
        self.key = key
        self.trigger = trigger
        self.attempt = attempt
        self.wakeID = wakeID
        self.payload = payload
        self.queued = queued
        self.budget = budget
        self.cancelGrace = cancelGrace
        self.inProcess = inProcess
    }
    /// The monotonic instant a run that reports no progress is cancelled at (`ProgressTimeoutSec=`).
    public var progressDeadline: UInt64? {
        guard progressTimeout > 0, case .running = phase, let started else { return nil }
        return (progress?.reportedAt ?? started.monotonic) &+ progressTimeout
    }

    /// `TASKD_DEADLINE_USEC`: the budget's end on CLOCK_REALTIME, once started.
    public var deadlineRealtime: UInt64? { started.map { $0.realtime &+ budget.microseconds } }
    /// Microseconds from start to end, once ended (nil if it never started).
    public var duration: UInt64? {
        guard let started, let ended else { return nil }
        return ended.monotonic - started.monotonic
    }
    /// Microseconds between the trigger and the start (waiting for a slot or behind another run).
    public var waited: UInt64? { started.map { $0.monotonic - queued.monotonic } }
    /// The reason cancellation was signalled, if it was.
    public var cancelReason: CancelReason? {
        switch phase {
        case .queued, .running: return nil
        case .cancelling(let r), .killed(let r): return r
        }
    }
    /// True while its handler runs (it holds a slot of `MaxConcurrentRuns=`).
    public var isActive: Bool { phase != .queued && outcome == nil }
    /// `queued`, `running`, `cancelling`, `killing`, or the outcome once ended.
    public var state: RunState {
        if let outcome { return RunState(rawValue: outcome.rawValue)! }
        switch phase {
        case .queued: return .queued
        case .running: return .running
        case .cancelling: return .cancelling
        case .killed: return .killing
        }
    }
}

/// Where a run is in its life: waiting to start, running, asked to stop, or forcibly ended.
public enum RunPhase: Hashable, Sendable {
    /// Created, not started: waiting for a slot (`MaxConcurrentRuns=`) or behind the task's run (`Overlap=queue`).
    case queued
    case running
    /// Cancellation was signalled for this reason; the handler may still finish.
    case cancelling(CancelReason)
    /// The hard stop came: SIGKILL sent, or the Swift task abandoned.
    case killed(CancelReason)
}
