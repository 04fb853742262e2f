/// Where a run is in its life: running, asked to stop, or forcibly ended.
public enum RunPhase: Hashable, Sendable {
    case running
    /// Cancellation was signalled for this reason; the handler may still finish.
    case cancelling(CancelReason)
    /// The hard stop came: SIGKILL sent, or the Swift task abandoned.
    case killed(CancelReason)
}
