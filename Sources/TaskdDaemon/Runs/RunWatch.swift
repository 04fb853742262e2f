import TaskScheduling
import TaskdProtocol

/// A client following some runs (`Wake` with `"more": true`): each later state of them goes to
/// `notify`, on the event loop, until each has ended, a failed run followed by its retry when
/// `followRetries`.
struct RunWatch: Sendable {
    var remaining: Set<String>
    let notify: @Sendable (RunInfo) -> Void
    var followRetries = true
    /// Failed runs whose retry is scheduled: the delay, told with their end.
    var retrying: [String: UInt64] = [:]
    /// Failed runs whose retry (or the run that replaced it) has not appeared yet.
    var awaiting: Set<String> = []

    var isDone: Bool { remaining.isEmpty && awaiting.isEmpty }

    /// Whether the watch follows `run`: one of its runs, or the retry one of them awaits.
    func follows(_ run: Run) -> Bool {
        remaining.contains(run.id) || run.previousAttemptID.map(awaiting.contains) == true
    }

    /// Takes `event` in: what to tell the client, if anything (the watch changes as it goes).
    mutating func take(_ event: SchedulerEvent) -> RunInfo? {
        let run = event.run
        if remaining.contains(run.id) {
            switch event {
            case .retryScheduled(_, let delay):
                guard followRetries else { return nil }
                retrying[run.id] = delay
                awaiting.insert(run.id)
                return nil
            case .ended:
                remaining.remove(run.id)
                var info = RunInfo(run)
                info.retryInUSec = retrying.removeValue(forKey: run.id)
                return info
            default:
                return RunInfo(run)
            }
        }
        if case .retryDropped = event, awaiting.remove(run.id) != nil {
            return RunInfo(run)  // its end, final now: no retry comes
        }
        guard let previous = run.previousAttemptID, awaiting.remove(previous) != nil else { return nil }
        // The retry, or the run that does its work in its place: followed from now on.
        retrying[previous] = nil
        if case .ended = event { return RunInfo(run) }
        remaining.insert(run.id)
        return RunInfo(run)
    }
}
