import Synchronization
import TaskScheduling
import TaskdDaemon
import TaskdIO

/// Follows every run of the daemon under test, as its observer: each run's latest state, the
/// retries scheduled after failures, and the tests waiting for a run to end.
final class RunTracker: RunEventObserver, Sendable {
    private struct State {
        var runs: [String: Run] = [:]
        var order: [String] = []
        var retryAfter: [String: UInt64] = [:]
        var waiting: [String: [CheckedContinuation<Run, Never>]] = [:]
        /// Tests waiting for a run of a task after the first `count` of them: (task, count, waiter).
        var awaitingNew: [(task: String, count: Int, waiter: CheckedContinuation<Run, Never>)] = []
    }

    private let state = Mutex(State())

    func observe(_ event: SchedulerEvent) {
        let run = event.run
        let resumed = state.withLock { s -> [CheckedContinuation<Run, Never>] in
            if s.runs.updateValue(run, forKey: run.id) == nil {
                s.order.append(run.id)
                let count = s.order.count { s.runs[$0]?.key.identifier == run.key.identifier }
                let (ready, rest) = (
                    s.awaitingNew.filter { $0.task == run.key.identifier && $0.count < count },
                    s.awaitingNew.filter { $0.task != run.key.identifier || $0.count >= count }
                )
                s.awaitingNew = rest
                for waiter in ready { waiter.waiter.resume(returning: run) }
            }
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

    /// The first run of `task` after its first `count` runs, once it exists.
    func run(of task: String, after count: Int) async -> Run {
        await withCheckedContinuation { continuation in
            let now = state.withLock { s -> Run? in
                let runs = s.order.compactMap { s.runs[$0] }.filter { $0.key.identifier == task }
                if runs.count > count { return runs[count] }
                s.awaitingNew.append((task, count, continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

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
