/// Everything the scheduler knows about one task: identity, budget, timers and handler.
/// Its name, calendar and handler are stored inline; every other setting sits in one shared,
/// copy-on-write `TaskOptions` (`SharedValues` stores equal ones once), read and written through
/// the properties below.
public struct TaskDefinition: Hashable, Sendable {
    public var key: TaskKey
    /// `OnCalendar=`: wall-clock elapses (systemd.time(7)); the earliest of them counts.
    public var onCalendar: [CalendarSpec]
    public var handler: HandlerSpec
    @Indirect var options: TaskOptions

    public var description: String {
        get { options.description }
        set { options.description = newValue }
    }
    /// The whole time a run may take; cancellation is signalled `cancelGrace` before its end.
    public var budget: TimeSpan {
        get { options.budget }
        set { options.budget = newValue }
    }
    public var cancelGrace: TimeSpan {
        get { options.cancelGrace }
        set { options.cancelGrace = newValue }
    }
    /// `OnStartupSec=`: each elapses once, relative to the daemon's start.
    public var onStartup: [TimeSpan] {
        get { options.onStartup }
        set { options.onStartup = newValue }
    }
    /// `OnUnitActiveSec=`: relative to the start of the task's last run (systemd semantics: no run yet, no elapse).
    public var onUnitActive: [TimeSpan] {
        get { options.onUnitActive }
        set { options.onUnitActive = newValue }
    }
    /// `OnUnitInactiveSec=`: relative to the end of the task's last run.
    public var onUnitInactive: [TimeSpan] {
        get { options.onUnitInactive }
        set { options.onUnitInactive = newValue }
    }
    /// `RandomizedDelaySec=`: each arming of the timers adds a delay drawn from [0, this).
    public var randomizedDelay: TimeSpan {
        get { options.randomizedDelay }
        set { options.randomizedDelay = newValue }
    }
    /// `FixedRandomDelay=`: the delay is the same every time, derived from the machine and the task.
    public var fixedRandomDelay: Bool {
        get { options.fixedRandomDelay }
        set { options.fixedRandomDelay = newValue }
    }
    /// `Persistent=`: the last trigger is kept across restarts; elapses missed while the daemon
    /// was down are caught up at start (`catchUp`), and `OnUnitActiveSec=`/`OnUnitInactiveSec=`
    /// count wall-clock time, across restarts and sleep.
    public var persistent: Bool {
        get { options.persistent }
        set { options.persistent = newValue }
    }
    /// `CatchUp=`: what missed elapses (downtime with `Persistent=`, or sleep) make.
    public var catchUp: CatchUpPolicy {
        get { options.catchUp }
        set { options.catchUp = newValue }
    }
    /// `CatchUpWindowSec=`: only elapses missed within this span before now are caught up (0: all).
    public var catchUpWindow: TimeSpan {
        get { options.catchUpWindow }
        set { options.catchUpWindow = newValue }
    }
    /// `Sleep=`: whether a run is cancelled before the system sleeps, or holds sleep back.
    public var sleep: SleepPolicy {
        get { options.sleep }
        set { options.sleep = newValue }
    }
    /// `Overlap=`: what a trigger does when it finds a run in progress.
    public var overlap: OverlapPolicy {
        get { options.overlap }
        set { options.overlap = newValue }
    }
    /// `QueueLimit=`: how many runs may wait behind the run in progress with `Overlap=queue`.
    public var queueLimit: Int {
        get { options.queueLimit }
        set { options.queueLimit = newValue }
    }
    /// `MaxAttempts=` and the backoff keys.
    public var retry: RetryPolicy {
        get { options.retry }
        set { options.retry = newValue }
    }
    /// `History=`: how many ended runs the state folder keeps for the task.
    public var historySize: Int {
        get { options.historySize }
        set { options.historySize = newValue }
    }
    /// `ProgressTimeoutSec=`: a run that reports no progress for this long is cancelled (0: never).
    public var progressTimeout: TimeSpan {
        get { options.progressTimeout }
        set { options.progressTimeout = newValue }
    }
    /// `RequireACPower=`, `RequireBatteryNotLow=`: what must hold for a run to start; a run
    /// triggered while one does not waits for it.
    public var conditions: Set<TaskCondition> {
        get { options.conditions }
        set { options.conditions = newValue }
    }
    /// `MaxDeferSec=`: how long a run waits for the conditions before it gives up (0: for ever).
    public var maxDefer: TimeSpan {
        get { options.maxDefer }
        set { options.maxDefer = newValue }
    }
    /// `ConditionLost=`: what a run in progress does when a condition stops holding.
    public var conditionLost: ConditionLostPolicy {
        get { options.conditionLost }
        set { options.conditionLost = newValue }
    }
    /// `ExpectSuccessWithinSec=`: no completed run for this long raises the overdue alert (0: never).
    public var expectSuccessWithin: TimeSpan {
        get { options.expectSuccessWithin }
        set { options.expectSuccessWithin = newValue }
    }
    /// `AlertAfterFailures=`: this many runs failing in a row raise the failing alert (0: never).
    public var alertAfterFailures: Int {
        get { options.alertAfterFailures }
        set { options.alertAfterFailures = newValue }
    }
    /// `PauseAfterFailures=`: this many runs failing in a row pause the task (0: never).
    public var pauseAfterFailures: Int {
        get { options.pauseAfterFailures }
        set { options.pauseAfterFailures = newValue }
    }
    /// `OnSuccess=`, `OnFailure=`, `OnOverdue=`: tasks (targets) to wake, the run's id and outcome
    /// in their payload.
    public var onSuccess: [String] {
        get { options.onSuccess }
        set { options.onSuccess = newValue }
    }
    public var onFailure: [String] {
        get { options.onFailure }
        set { options.onFailure = newValue }
    }
    public var onOverdue: [String] {
        get { options.onOverdue }
        set { options.onOverdue = newValue }
    }
    /// `WakeUsers=`/`WakeGroups=`: who besides root may wake or cancel the task (nil: anyone allowed on the socket).
    public var wakeAccess: AccessList? {
        get { options.wakeAccess }
        set { options.wakeAccess = newValue }
    }

    public init(
        key: TaskKey, description: String = "", budget: TimeSpan? = nil, cancelGrace: TimeSpan? = nil,
        onStartup: [TimeSpan] = [], onUnitActive: [TimeSpan] = [], onCalendar: [CalendarSpec] = [],
        handler: HandlerSpec
    ) {
        self.key = key
        self.options = TaskOptions(
            description: description, budget: budget ?? TaskKind.defaultBudget(for: key.kind),
            cancelGrace: cancelGrace ?? TaskKind.defaultCancelGrace, onStartup: onStartup,
            onUnitActive: onUnitActive)
        self.onCalendar = onCalendar
        self.handler = handler
    }

    /// Offset from a run's start at which cancellation is signalled: `budget − grace`, never negative.
    public var cancelOffset: UInt64 {
        budget.microseconds > cancelGrace.microseconds ? budget.microseconds - cancelGrace.microseconds : 0
    }
}
