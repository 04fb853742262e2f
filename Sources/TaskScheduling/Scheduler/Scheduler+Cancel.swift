/// How runs are cancelled: every cancel, for whatever reason, goes through `cancel(_:reason:…)`,
/// as every state change of a systemd timer goes through `timer_set_state`.
extension Scheduler {
    /// The one way a run is cancelled. A run not started yet ends now (outcome `cancelled`); a
    /// running one has its cancellation signalled now (`.cancel`, reported `cancelling`); one
    /// already cancelling or killed keeps its first reason and is not signalled again. The hard
    /// stop of a run that started comes one `CancelGraceSec=` from now at the latest (`killBy`,
    /// if earlier), never later than it was due. A run whose handler never started
    /// (`handlerStarted` false: its fleet claim was not won) ends now as a queued one does, keeping
    /// its first reason but for its budget's end, which gives way to `reason` other than
    /// `requested` (a handler that never started did not run out of time). `run` is stored as
    /// given (the caller may have changed it, or made it); returns it as it is now (as it ended,
    /// for one that ended).
    @discardableResult
    mutating func cancel(
        _ run: Run, reason: CancelReason, killBy: UInt64 = .max, handlerStarted: Bool = true, at now: ClockReading,
        actions: inout [SchedulerAction]
    ) -> Run {
        var run = run
        if run.phase == .queued || !handlerStarted {
            switch run.phase {
            case .queued, .running: run.phase = .cancelling(reason)
            case .cancelling(.budget), .killed(.budget): if reason != .requested { run.phase = .cancelling(reason) }
            default: break
            }
            runs[run.id] = run
            let ended = finish(run.id, termination: nil, at: now)
            actions += ended
            return ended.firstEnded ?? run
        }
        run.killAt = min(run.killAt, now.monotonic &+ run.cancelGrace.microseconds, killBy)
        if case .running = run.phase {
            run.phase = .cancelling(reason)
            actions.append(.cancel(run))
            actions.append(.report(.cancelling(run)))
        }
        runs[run.id] = run
        return run
    }

    /// Cancels a run by its id, or everything of every task the target names: the run in progress,
    /// the runs queued behind it and a pending retry. Returns the runs it signalled or ended.
    public mutating func cancel(target: String, reason: CancelReason = .requested, at now: ClockReading)
        throws(TargetError) -> (runs: [Run], actions: [SchedulerAction])
    {
        var actions: [SchedulerAction] = []
        var cancelled: [Run] = []
        if let run = runs[target] {
            let wasOwn = tasks.read(run.key) { $0.inProgress.contains(run.id) } == true
            if let run = detach(run.id, reason: reason, at: now, actions: &actions) { cancelled.append(run) }
            if wasOwn { promoteNext(run.key, at: now, actions: &actions) }
        } else {
            for key in try resolver.resolve(target) {
                cancelled += clear(key, reason: reason, at: now, actions: &actions)
            }
        }
        actions += pump(at: now)
        return (cancelled, endBatch(actions))
    }

    /// The daemon is stopping: every run is cancelled (`reason`: `shutdown`, or `restart` when it
    /// comes back at once) and no new run starts. Their acknowledged wakes stay on record, so they
    /// run again after the restart; with `restart`, the runs cut short do too (`cutShort`).
    public mutating func shutdown(at now: ClockReading, reason: CancelReason = .shutdown) -> [SchedulerAction] {
        isStopping = true
        var actions: [SchedulerAction] = []
        ready.removeAll()
        for id in runs.keys.sorted() {
            guard let run = runs[id] else { continue }
            cancel(run, reason: reason, at: now, actions: &actions)
        }
        return endBatch(actions)
    }

    /// Cancels everything of one task: its queued runs, its pending retry and its current run.
    mutating func clear(_ key: TaskKey, reason: CancelReason, at now: ClockReading, actions: inout [SchedulerAction])
        -> [Run]
    {
        guard let state = tasks[key] else { return [] }
        var cancelled: [Run] = []
        for id in state.queue {
            if let run = detach(id, reason: reason, at: now, actions: &actions) { cancelled.append(run) }
        }
        if let retry = state.retry {
            tasks[key]!.retry = nil
            actions.append(.settle(retry.records))
            if let failed = state.lastRun, failed.id == retry.failedRunID {
                actions.append(.report(.retryDropped(failed)))
            }
        }
        // The newest first, the current run last, as the runs beside it once went before it.
        for id in state.inProgress.reversed() {
            if let run = detach(id, reason: reason, at: now, actions: &actions) { cancelled.insert(run, at: 0) }
        }
        return cancelled
    }

    /// Cancels one run and detaches it from its task (fencing its result).
    mutating func detach(_ id: String, reason: CancelReason, at now: ClockReading, actions: inout [SchedulerAction])
        -> Run?
    {
        guard var run = runs[id] else { return nil }
        tasks[run.key]?.inProgress.removeAll { $0 == id }
        tasks[run.key]?.queue.removeAll { $0 == id }
        ready.removeAll { $0 == id }
        run.fenced = true
        return cancel(run, reason: reason, at: now, actions: &actions)
    }

    /// Time passed for one run: a progress report held back is told, and the run is cancelled at
    /// its `ProgressTimeoutSec=` or its budget's cancellation point, and stopped at its hard stop.
    mutating func passTime(_ id: String, at now: ClockReading, actions: inout [SchedulerAction]) {
        guard var run = runs[id] else { return }
        if run.progressUntold, let told = run.progressToldAt, told &+ Self.progressInterval <= now.monotonic {
            run.progressUntold = false
            run.progressToldAt = now.monotonic
            runs[id] = run
            actions.append(.report(.progress(run)))
        }
        if let deadline = run.progressDeadline, deadline <= now.monotonic, run.cancelAt > now.monotonic {
            run = cancel(run, reason: .noProgress, at: now, actions: &actions)
        }
        if case .running = run.phase, run.cancelAt <= now.monotonic {
            // Its hard stop stays where the budget put it: one grace from the cancellation point.
            run = cancel(run, reason: .budget, at: now, actions: &actions)
        }
        if case .cancelling(let reason) = run.phase, run.killAt <= now.monotonic {
            run.phase = .killed(reason)
            runs[id] = run
            actions.append(.kill(run))
            actions.append(.report(.killing(run)))
            // An in-process task cannot be stopped: it is abandoned, and the run is over now.
            if run.inProcess {
                abandoned[id] = now.monotonic &+ run.cancelGrace.microseconds
                actions += finish(id, termination: nil, at: now)
            }
        }
    }
}

extension [SchedulerAction] {
    /// The run of the first `ended` report.
    fileprivate var firstEnded: Run? {
        for case .report(.ended(let run)) in self { return run }
        return nil
    }
}
