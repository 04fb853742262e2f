// A task's policies: what its runs do when triggers overlap, timers were missed, the fleet is out
// of reach, a condition is lost, a run was cut short, the system sleeps.

/// What a trigger does when it finds the task's run in progress (`Overlap=`).
public enum OverlapPolicy: String, Hashable, Sendable, CaseIterable {
    /// The trigger joins the run in progress (the default).
    case coalesce
    /// The trigger waits behind the run in progress, in a queue of at most `QueueLimit=` runs.
    case queue
    /// The run in progress is cancelled (reason `superseded`) and a new run starts.
    case replace
    /// The trigger is dropped: it does not run, and the journal says so (a wake's reply: `skipped`).
    case skip
    /// The trigger starts a run of its own beside the runs in progress, up to `MaxInstances=` of
    /// them; beyond, it waits as with `queue`. A wake id that a run in progress has joins it.
    case allow
}

/// `CatchUp=`: what happens to timer elapses missed while taskd was down (with `Persistent=`) or
/// the system slept.
public enum CatchUpPolicy: String, Hashable, Sendable {
    /// They are skipped: the next elapse after now is armed.
    case none
    /// One run (trigger `catchup`) for the latest of them, as systemd's `Persistent=` does.
    case latest
    /// One run per missed elapse, oldest first, each with its own scheduled time (at most
    /// `CatchUpPolicy.limit`, the latest ones).
    case all

    /// The most runs `all` makes at once.
    public static let limit = 100
}

/// What a run of a `Fleet=once` or `Fleet=max:N` task does when etcd cannot be reached to claim
/// its slot (`FleetUnavailable=`); journaled either way, and a run that does not happen here ends
/// `cancelled`, reason `fleet-unavailable`.
public enum FleetUnavailablePolicy: String, Hashable, Sendable, CaseIterable {
    /// The run does not happen here (cancelled, reason `fleet-unavailable`): never twice, maybe never.
    case skip
    /// The run happens here anyway, unclaimed: never missed, maybe twice.
    case local
    /// The run waits here, asking etcd again every second, and starts once its claim is won; it
    /// gives up (as `skip`) after `MaxDeferSec=` from its start, if set, or at its budget's end:
    /// never twice, maybe late.
    case wait
}

/// `ConditionLost=`: what happens to a run in progress when one of its task's conditions stops
/// holding.
public enum ConditionLostPolicy: String, Hashable, Sendable {
    /// Cancelled as at its budget (`KillSignal=`, Swift cancellation, the hard stop one grace
    /// later); outcome `cancelled`, reason `condition-lost`.
    case cancel
    /// Left to finish.
    case `continue`
}

/// What the next run of a task starts from when an earlier one was cut short (`ResumeFrom=`).
public enum ResumePolicy: String, Hashable, Sendable, CaseIterable {
    /// From the last checkpoint its handler kept (`context.checkpoint`, `CHECKPOINT=`), if any:
    /// the Swift handler's `context.resumeState`, the command's `TASKD_CHECKPOINT`.
    case checkpoint
    /// From the start: the last checkpoint is kept and shown, never handed to a run.
    case start
}

/// `Sleep=`: what a run in progress does when the system is about to sleep.
public enum SleepPolicy: String, Hashable, Sendable {
    /// Cancelled as at its budget, its grace bounded by logind's `InhibitDelayMaxSec=`; outcome
    /// `cancelled`, reason `sleep`; it runs again after the system resumes.
    case cancel
    /// taskd holds a sleep *block* inhibitor while the run lasts: work that must not be cut.
    case block
}

/// A logind inhibitor lock taskd may hold.
public enum SleepInhibitor: String, Hashable, Sendable {
    /// Sleep waits (up to logind's `InhibitDelayMaxSec=`) until the runs it cancels have ended.
    case delay
    /// Sleep is refused while a run of a `Sleep=block` task is active.
    case block
}
