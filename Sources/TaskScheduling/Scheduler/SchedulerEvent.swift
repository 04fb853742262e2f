/// Something that happened to a run, to be journaled and streamed to watching clients.
public enum SchedulerEvent: Hashable, Sendable {
    case started(Run)
    /// The run waits for a free slot (`MaxConcurrentRuns=`).
    case waiting(Run)
    /// The run waits behind the task's run in progress (`Overlap=queue`).
    case queued(Run)
    /// Cancellation was signalled (the run's phase carries the reason).
    case cancelling(Run)
    /// The hard stop was sent.
    case killing(Run)
    /// The run ended; `run.outcome` is set. A `fenced` run's result is stale.
    case ended(Run)
    /// A trigger found the task running and joined that run.
    case coalesced(Run, Trigger)
    /// A trigger found the task's queue full and joined its last queued run.
    case overflow(Run, Trigger)
    /// A trigger found the task's queue full, and its payload differs from the last queued run's:
    /// it was refused (the run given is the one it would have joined).
    case refused(Run, Trigger)
    /// A trigger found the task's run in progress and `Overlap=skip` dropped it (the run given is
    /// the one in progress).
    case skipped(Run, Trigger)
    /// The run failed; attempt `run.attempt + 1` starts after `delay` microseconds.
    case retryScheduled(Run, delay: UInt64)
    /// The retry of this run, abandoned at its budget's end, waits for its Swift task to return,
    /// at most `until` microseconds more; then it starts anyway.
    case retryWaits(Run, until: UInt64)
    /// The pending retry of this failed run was dropped (`taskctl cancel`, reload, removal).
    case retryDropped(Run)
    /// The run waits for its task's conditions (`run.waitingFor`) before it starts.
    case deferred(Run)
    /// The run reported progress or a status (told at most once per `Scheduler.progressInterval`).
    case progress(Run)

    /// The run the event is about.
    public var run: Run {
        switch self {
        case .started(let r), .waiting(let r), .queued(let r), .cancelling(let r), .killing(let r), .ended(let r),
            .coalesced(let r, _), .overflow(let r, _), .refused(let r, _), .skipped(let r, _),
            .retryScheduled(let r, _),
            .retryWaits(let r, _), .retryDropped(let r), .deferred(let r), .progress(let r):
            return r
        }
    }
}
