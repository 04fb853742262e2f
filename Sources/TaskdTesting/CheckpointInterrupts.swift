import Synchronization
import TaskScheduling
import TaskdDaemon

/// The interruptions a test armed (`TaskTestDriver.interrupt(_:afterCheckpoint:)`): the run of a
/// task that keeps its N-th checkpoint is cancelled the moment that checkpoint is on disk, before
/// its handler's `checkpoint` call returns, as a budget's end, a sleep or a crash would cut it.
final class CheckpointInterrupts: Sendable {
    /// Cuts run `runID` of `key` short in the way given.
    typealias Cut = @Sendable (Interruption, TaskKey, String) async -> Void

    private struct State {
        var cut: Cut?
        /// Task identifier → the checkpoint after which its next run is cut short, and how.
        var armed: [String: (at: Int, how: Interruption)] = [:]
        /// Run id → (checkpoints kept, the count it is cut short at, how).
        var counting: [String: (kept: Int, at: Int, how: Interruption)] = [:]
    }

    private let state = Mutex(State())

    func attach(_ cut: @escaping Cut) { state.withLock { $0.cut = cut } }

    func arm(_ task: String, after count: Int, by how: Interruption) {
        state.withLock { $0.armed[task] = (count, how) }
    }

    /// `handler`, its controls watched: the run an interruption is armed for is cut short.
    func instrument(_ handler: TaskHandler) -> TaskHandler {
        TaskHandler { [self] run, now, controls in
            let armed = state.withLock { s -> Bool in
                guard let (at, how) = s.armed.removeValue(forKey: run.key.identifier) else { return false }
                s.counting[run.id] = (0, at, how)
                return true
            }
            guard armed else { return try await handler.body(run, now, controls) }
            return try await handler.body(run, now, Controls(base: controls, runID: run.id, key: run.key, owner: self))
        }
    }

    /// Counts one checkpoint of `runID` kept; cuts its run short at the armed one, and returns once
    /// the handler's task knows it is cancelled (taskd may deliver cancellation off the loop).
    fileprivate func kept(_ runID: String, key: TaskKey) async {
        let (how, cut) = state.withLock { s -> (Interruption?, Cut?) in
            guard var c = s.counting[runID] else { return (nil, nil) }
            c.kept += 1
            s.counting[runID] = c.kept >= c.at ? nil : c
            return (c.kept >= c.at ? c.how : nil, s.cut)
        }
        guard let how, let cut else { return }
        await cut(how, key, runID)
        let gate = CancelGate()
        await withTaskCancellationHandler {
            await withCheckedContinuation { gate.wait($0) }
        } onCancel: {
            gate.open()
        }
    }

    /// The run's controls, passed through; a checkpoint kept is counted.
    private struct Controls: RunControls {
        let base: any RunControls
        let runID: String
        let key: TaskKey
        let owner: CheckpointInterrupts

        func scheduleNext(_ delay: Duration) { base.scheduleNext(delay) }
        func progress(completed: Int64, total: Int64?) { base.progress(completed: completed, total: total) }
        func status(_ text: String) { base.status(text) }
        var clock: any DaemonClock { base.clock }
        func checkpoint(_ value: String) async -> String? {
            let refused = await base.checkpoint(value)
            if refused == nil { await owner.kept(runID, key: key) }
            return refused
        }
    }
}

/// How `TaskTestDriver.interrupt(_:afterCheckpoint:by:)` cuts a run short, as taskd's own causes do.
public enum Interruption: Sendable, Hashable {
    /// `taskctl cancel`: the run is cancelled (reason `requested`) and not retried.
    case cancel
    /// The system is about to sleep: the run is cancelled (reason `sleep`); it runs again (trigger
    /// `.resume`) once the test calls `systemResumes()`.
    case sleep
    /// The budget runs out: the clock moves to the budget's end, the handler is cancelled and then
    /// abandoned (outcome `.killed`), and the run is retried as `MaxAttempts=` allows.
    case budget
}
