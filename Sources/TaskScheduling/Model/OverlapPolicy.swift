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
