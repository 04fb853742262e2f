/// Something that happened to a run, to be journaled and streamed to watching clients.
public enum SchedulerEvent: Hashable, Sendable {
    case started(Run)
    /// Cancellation was signalled (the run's phase carries the reason).
    case cancelling(Run)
    /// The hard stop was sent.
    case killing(Run)
    /// The run ended; `run.outcome` is set.
    case ended(Run)
    /// A trigger found the task running and joined that run.
    case coalesced(Run, Trigger)

    /// The run the event is about.
    public var run: Run {
        switch self {
        case .started(let r), .cancelling(let r), .killing(let r), .ended(let r), .coalesced(let r, _): return r
        }
    }
}
