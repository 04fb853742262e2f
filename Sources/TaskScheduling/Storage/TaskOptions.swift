/// A task definition's settings beyond its name, calendar and handler, each read and written as a
/// property of `TaskDefinition` (`definition.budget`): the same in most tasks of a configuration,
/// so that `SharedValues` stores them once for all of them.
public struct TaskOptions: Hashable, Sendable {
    /// `Description=`: free text for `taskctl list` and the journal.
    public var description: String
    /// The whole time a run may take; cancellation is signalled `cancelGrace` before its end.
    public var budget: TimeSpan
    /// How long before the budget's end cancellation is signalled (`CancelGraceSec=`).
    public var cancelGrace: TimeSpan
    /// `OnStartupSec=`: each elapses once, relative to the daemon's start.
    public var onStartup: [TimeSpan]
    /// `OnUnitActiveSec=`: relative to the start of the task's last run (systemd semantics: no run yet, no elapse).
    public var onUnitActive: [TimeSpan]
    /// `OnUnitInactiveSec=`: relative to the end of the task's last run.
    public var onUnitInactive: [TimeSpan] = []
    /// `RandomizedDelaySec=`: each arming of the timers adds a delay drawn from [0, this).
    public var randomizedDelay: TimeSpan = .zero
    /// `FixedRandomDelay=`: the delay is the same every time, derived from the machine and the task.
    public var fixedRandomDelay = false
    /// `Persistent=`: the last trigger is kept across restarts; elapses missed while the daemon
    /// was down are caught up at start (`catchUp`), and `OnUnitActiveSec=`/`OnUnitInactiveSec=`
    /// count wall-clock time, across restarts and sleep.
    public var persistent = false
    /// `CatchUp=`: what missed elapses (downtime with `Persistent=`, or sleep) make.
    public var catchUp = CatchUpPolicy.latest
    /// `CatchUpWindowSec=`: only elapses missed within this span before now are caught up (0: all).
    public var catchUpWindow = TimeSpan.zero
    /// `Sleep=`: whether a run is cancelled before the system sleeps, or holds sleep back.
    public var sleep = SleepPolicy.cancel
    /// `Fleet=`: on every host, once across the fleet per slot, or on at most N hosts at a time.
    public var fleet = FleetMode.host
    /// `FleetUnavailable=`: what a fleet run does when etcd cannot be reached.
    public var fleetUnavailable = FleetUnavailablePolicy.skip
    /// `ConcurrencyGroup=`: the group of tasks whose runs share its places (nil: none).
    public var concurrencyGroup: ConcurrencyGroup?
    /// `ResumeFrom=`: whether a run is handed the checkpoint an earlier run kept.
    public var resumeFrom = ResumePolicy.checkpoint
    /// `Overlap=`: what a trigger does when it finds a run in progress.
    public var overlap = OverlapPolicy.coalesce
    /// `QueueLimit=`: how many runs may wait behind the run in progress with `Overlap=queue`.
    public var queueLimit = 8
    /// `MaxInstances=`: with `Overlap=allow`, how many runs of the task may be in progress at
    /// once (0: no limit but `MaxConcurrentRuns=`).
    public var maxInstances = 0
    /// `MaxAttempts=` and the backoff keys.
    public var retry = RetryPolicy()
    /// `History=`: how many ended runs the state folder keeps for the task.
    public var historySize = 20
    /// `ProgressTimeoutSec=`: a run that reports no progress for this long is cancelled (0: never).
    public var progressTimeout = TimeSpan.zero
    /// `RequireACPower=`, `RequireBatteryNotLow=`: what must hold for a run to start; a run
    /// triggered while one does not waits for it.
    public var conditions: Set<TaskCondition> = []
    /// `MaxDeferSec=`: how long a run waits for the conditions before it gives up (0: for ever).
    public var maxDefer = TimeSpan.zero
    /// `ConditionLost=`: what a run in progress does when a condition stops holding.
    public var conditionLost = ConditionLostPolicy.cancel
    /// `WakeUsers=`/`WakeGroups=`: who besides root may wake or cancel the task (nil: anyone allowed on the socket).
    public var wakeAccess: AccessList?
    /// `ExpectSuccessWithinSec=`: no completed run for this long raises the overdue alert (0: never).
    public var expectSuccessWithin = TimeSpan.zero
    /// `AlertAfterFailures=`: this many runs failing in a row raise the failing alert (0: never).
    public var alertAfterFailures = 0
    /// `PauseAfterFailures=`: this many runs failing in a row pause the task (0: never).
    public var pauseAfterFailures = 0
    /// `OnSuccess=`: tasks (targets) to wake when a run succeeds, its id and outcome in their payload.
    public var onSuccess: [String] = []
    /// `OnFailure=`: tasks (targets) to wake when a run fails, as `onSuccess`.
    public var onFailure: [String] = []
    /// `After=`: tasks (targets) whose runs started by the same trigger (one wake of several tasks,
    /// timers due at the same moment) end before this task's run starts. Order only: it runs
    /// whatever their outcome, and a trigger of this task alone waits for nothing.
    public var after: [String] = []
    /// `OnOverdue=`: tasks (targets) to wake when the overdue alert is raised, as `onSuccess`.
    public var onOverdue: [String] = []
}
