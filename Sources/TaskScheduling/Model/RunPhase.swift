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
