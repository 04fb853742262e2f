/// Everything the scheduler knows about one task: identity, budget, timers and handler.
public struct TaskDefinition: Hashable, Sendable {
    public var key: TaskKey
    public var description: String
    /// The whole time a run may take; cancellation is signalled `cancelGrace` before its end.
    public var budget: TimeSpan
    public var cancelGrace: TimeSpan
    /// `OnStartupSec=`: each elapses once, relative to the daemon's start.
    public var onStartup: [TimeSpan]
    /// `OnUnitActiveSec=`: relative to the start of the task's last run (systemd semantics: no run yet, no elapse).
    public var onUnitActive: [TimeSpan]
    /// `OnCalendar=`: wall-clock elapses (systemd.time(7)); the earliest of them counts.
    public var onCalendar: [CalendarSpec]
    /// `OnUnitInactiveSec=`: relative to the end of the task's last run.
    public var onUnitInactive: [TimeSpan] = []
    /// `RandomizedDelaySec=`: each arming of the timers adds a delay drawn from [0, this).
    public var randomizedDelay: TimeSpan = .zero
    /// `FixedRandomDelay=`: the delay is the same every time, derived from the machine and the task.
    public var fixedRandomDelay = false
    /// `Persistent=`: the last trigger is kept across restarts, and a calendar elapse missed while
    /// the daemon was down fires once at start (trigger `catchup`), after the random delay.
    public var persistent = false
    /// `Overlap=`: what a trigger does when it finds a run in progress.
    public var overlap = OverlapPolicy.coalesce
    /// `QueueLimit=`: how many runs may wait behind the run in progress with `Overlap=queue`.
    public var queueLimit = 8
    /// `MaxAttempts=` and the backoff keys.
    public var retry = RetryPolicy()
    /// `History=`: how many ended runs the state folder keeps for the task.
    public var historySize = 20
    /// `WakeUsers=`/`WakeGroups=`: who besides root may wake or cancel the task (nil: anyone allowed on the socket).
    public var wakeAccess: AccessList?
    public var handler: HandlerSpec
    /// Where the definition came from (a file path, or "swift" for code), for messages.
    public var source: String

    public init(
        key: TaskKey, description: String = "", budget: TimeSpan? = nil, cancelGrace: TimeSpan? = nil,
        onStartup: [TimeSpan] = [], onUnitActive: [TimeSpan] = [], onCalendar: [CalendarSpec] = [],
        handler: HandlerSpec, source: String = "swift"
    ) {
        self.key = key
        self.description = description
        self.budget = budget ?? TaskKind.defaultBudget(for: key.kind)
        self.cancelGrace = cancelGrace ?? TaskKind.defaultCancelGrace
        self.onStartup = onStartup
        self.onUnitActive = onUnitActive
        self.onCalendar = onCalendar
        self.handler = handler
        self.source = source
    }

    /// Offset from a run's start at which cancellation is signalled: `budget − grace`, never negative.
    public var cancelOffset: UInt64 {
        budget.microseconds > cancelGrace.microseconds ? budget.microseconds - cancelGrace.microseconds : 0
    }
}
