import Synchronization
import TaskScheduling
import TaskdDaemon
import TaskdIO

/// Follows every run of the daemon under test, as its observer: each run's latest state, the
/// retries scheduled after failures, and the tests waiting for a run to end.
final class RunTracker: RunEventObserver {
    private struct State {
        var runs: [String: Run] = [:]
        var order: [String] = []
        var retryAfter: [String: UInt64] = [:]
        var waiting: [String: [CheckedContinuation<Run, Never>]] = [:]
    }

    private let state = Mutex(State())

    func observe(_ event: SchedulerEvent) {
        let run = event.run
        let resumed = state.withLock { s -> [CheckedContinuation<Run, Never>] in
            if s.runs.updateValue(run, forKey: run.id) == nil { s.order.append(run.id) }
            if case .retryScheduled(_, let delay) = event { s.retryAfter[run.id] = delay }
            guard case .ended = event else { return [] }
            return s.waiting.removeValue(forKey: run.id) ?? []
        }
        guard !resumed.isEmpty else { return }
        // After the batch this event is part of: the retry it schedules is known by then.
        EventLoop.shared.afterHandlerJobs { for waiter in resumed { waiter.resume(returning: run) } }
    }

    /// The run as it is now.
    func run(_ id: String) -> Run? { state.withLock { $0.runs[id] } }

    /// Every run so far, in the order they appeared.
    var runs: [Run] { state.withLock { s in s.order.compactMap { s.runs[$0] } } }

    /// The retry delay scheduled after the run failed, if any (µs).
    func retryAfter(_ id: String) -> UInt64? { state.withLock { $0.retryAfter[id] } }

    /// Returns the run once it has ended.
    func ended(_ id: String) async -> Run {
        await withCheckedContinuation { continuation in
            let now = state.withLock { s -> Run? in
                if let run = s.runs[id], run.outcome != nil { return run }
                s.waiting[id, default: []].append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
