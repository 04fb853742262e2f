/// What a trigger did for one task (the `disposition` of a run in a Wake reply).
public enum WakeDisposition: String, Hashable, Sendable {
    /// A new run was created; it starts now, or when a slot is free (`MaxConcurrentRuns=`).
    case started
    /// The trigger joined the run in progress (`Overlap=coalesce`, or a wake with the same id).
    case coalesced
    /// The trigger waits behind the run in progress (`Overlap=queue`).
    case queued
    /// The task's queue was full: the trigger joined the last queued run, and the overflow was journaled.
    case overflow
    /// The task's queue was full and the trigger's payload differs from the last queued run's: it
    /// was not run (its payload is never dropped silently); the run is the one it would have joined.
    case refused
    /// A run was in progress and the task's `Overlap=skip` dropped the trigger: it did not run,
    /// and was journaled; the run is the one in progress.
    case skipped
    /// The task is paused: the trigger was recorded (a run that ended at once, `cancelled`, reason
    /// `paused`) and not run.
    case paused

    /// True when the trigger was not run (`refused`, `skipped`): there is no run of it to follow.
    public var isDropped: Bool { self == .refused || self == .skipped }
}
