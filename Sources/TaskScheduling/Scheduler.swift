/// The pure scheduling core: it owns tasks and runs, and turns inputs (wakes, time passing, handler
/// ends, cancels) into `SchedulerAction`s. It never reads a clock or sleeps: every input carries
/// the time, and randomness comes from the injected generator, so tests drive it by hand.
public struct Scheduler: Sendable {
    public private(set) var tasks: [TaskKey: TaskState] = [:]
    public private(set) var runs: [String: Run] = [:]
    /// True once `shutdown` was called: no new runs start.
    public private(set) var isStopping = false
    private var random: any RandomNumberGenerator & Sendable
    /// When the scheduler started, on both clocks.
    public let startedAt: ClockReading

    /// The machine's identity (its /etc/machine-id), for `FixedRandomDelay=`.
    public let machineID: String

    public init(
        definitions: [TaskDefinition], startedAt: ClockReading,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), machineID: String = "",
        persistedTriggers: [TaskKey: UInt64] = [:]
    ) {
        self.random = random
        self.startedAt = startedAt
        self.machineID = machineID
        for d in definitions {
            tasks[d.key] = TaskState(definition: d, daemonStart: startedAt, persistedTrigger: persistedTriggers[d.key])
            drawRandomDelay(d.key)
        }
    }

    /// Draws the `RandomizedDelaySec=` delay for the task's next arming (systemd re-draws it each time).
    private mutating func drawRandomDelay(_ key: TaskKey) {
        guard let d = tasks[key]?.definition, d.randomizedDelay.microseconds > 0 else { return }
        let span = d.randomizedDelay.microseconds
        if d.fixedRandomDelay {
            tasks[key]!.randomDelay = Self.stableHash(machineID + "\u{0}" + key.description) % span
        } else {
            tasks[key]!.randomDelay = random.next(upperBound: span)
        }
    }

    /// FNV-1a, 64 bits: the same on every run and machine for the same input.
    static func stableHash(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return h
    }

    /// Resolves targets against the current tasks.
    public var resolver: TargetResolver { TargetResolver(keys: tasks.keys) }

    /// The earliest monotonic instant at which `advance(to:)` has something to do.
    public var nextDeadline: UInt64? {
        var next: UInt64? = nil
        func consider(_ t: UInt64) { next = min(next ?? t, t) }
        if !isStopping { for state in tasks.values { if let t = state.nextElapse { consider(t) } } }
        for run in runs.values {
            switch run.phase {
            case .running: consider(run.cancelAt)
            case .cancelling: consider(run.killAt)
            case .killed: break
            }
        }
        return next
    }

    // MARK: Inputs

    /// A wake request: starts a run of every task the target names, or joins the run in progress.
    public mutating func wake(
        target: String, wakeID: String? = nil, payload: String? = nil, at now: ClockReading
    ) throws(TargetError) -> (runs: [WakeResult], actions: [SchedulerAction]) {
        let keys = try resolver.resolve(target)
        var results: [WakeResult] = []
        var actions: [SchedulerAction] = []
        for key in keys {
            if let result = trigger(key, .wake, wakeID: wakeID, payload: payload, at: now, actions: &actions) {
                results.append(result)
            }
        }
        return (results, actions)
    }

    /// Time passed: fires due timers, signals budget cancellation, sends hard stops.
    public mutating func advance(to now: ClockReading) -> [SchedulerAction] {
        var actions: [SchedulerAction] = []
        for id in runs.keys.sorted() {
            guard var run = runs[id] else { continue }
            if case .running = run.phase, run.cancelAt <= now.monotonic {
                run.phase = .cancelling(.budget)
                runs[id] = run
                actions.append(.cancel(run))
                actions.append(.report(.cancelling(run)))
            }
            if case .cancelling(let reason) = run.phase, run.killAt <= now.monotonic {
                run.phase = .killed(reason)
                runs[id] = run
                actions.append(.kill(run))
                actions.append(.report(.killing(run)))
                if tasks[run.key]?.definition.handler == .swift {
                    // An in-process task cannot be stopped: it is abandoned, and the run is over now.
                    actions += finish(id, termination: nil, at: now)
                }
            }
        }
        guard !isStopping else { return actions }
        for key in tasks.keys.sorted() {
            guard let state = tasks[key], let due = state.nextElapse, due <= now.monotonic else { continue }
            // Every timer due now makes one trigger: `startup` if an OnStartupSec= is among them.
            let isStartup = state.pendingStartup.first.map { $0 <= now.monotonic } ?? false
            if isStartup { tasks[key]!.pendingStartup.removeAll { $0 <= now.monotonic } }
            let isCatchUp = state.catchUpPending && (state.calendarDueMonotonic.map { $0 <= now.monotonic } ?? false)
            tasks[key]!.catchUpPending = false
            if let calendar = state.calendarDueMonotonic, calendar <= now.monotonic {
                tasks[key]!.rearmCalendar(after: max(now.realtime, state.calendarDueRealtime ?? 0), now: now)
            }
            tasks[key]!.lastActivation = now.monotonic
            let kind: Trigger = isStartup ? .startup : (isCatchUp ? .catchup : .timer)
            _ = trigger(key, kind, wakeID: nil, payload: nil, at: now, actions: &actions)
            drawRandomDelay(key)
        }
        return actions
    }

    /// The handler of `runID` ended. A run the scheduler no longer tracks (abandoned) is ignored.
    public mutating func handlerEnded(runID: String, termination: Termination, at now: ClockReading)
        -> [SchedulerAction]
    {
        finish(runID, termination: termination, at: now)
    }

    /// Cancels the runs of every task the target names; returns the runs it signalled.
    public mutating func cancel(target: String, reason: CancelReason = .requested, at now: ClockReading)
        throws(TargetError) -> (runs: [Run], actions: [SchedulerAction])
    {
        let keys = try resolver.resolve(target)
        var actions: [SchedulerAction] = []
        var cancelled: [Run] = []
        for key in keys {
            guard let id = tasks[key]?.currentRunID, let run = cancelRun(id, reason: reason, at: now, actions: &actions)
            else { continue }
            cancelled.append(run)
        }
        return (cancelled, actions)
    }

    /// The wall clock jumped or the time zone changed: every calendar timer is computed again from
    /// its last trigger (or the start), as systemd does, so that a backward jump does not fire an
    /// elapse twice and a forward jump fires what it skipped once. Monotonic timers are untouched.
    /// Returns the names of the calendar tasks it re-armed.
    public mutating func clockChanged(at now: ClockReading) -> [String] {
        var moved: [String] = []
        for key in tasks.keys.sorted() where !(tasks[key]!.definition.onCalendar.isEmpty) {
            let base = tasks[key]!.lastTrigger?.realtime ?? startedAt.realtime
            tasks[key]!.rearmCalendar(after: base, now: now)
            moved.append(key.identifier)
        }
        return moved
    }

    /// The daemon is stopping: every run is cancelled (reason `shutdown`) and no new run starts.
    public mutating func shutdown(at now: ClockReading) -> [SchedulerAction] {
        isStopping = true
        var actions: [SchedulerAction] = []
        for id in runs.keys.sorted() { _ = cancelRun(id, reason: .shutdown, at: now, actions: &actions) }
        return actions
    }

    // MARK: Internals

    private mutating func trigger(
        _ key: TaskKey, _ trigger: Trigger, wakeID: String?, payload: String?, at now: ClockReading,
        actions: inout [SchedulerAction]
    ) -> WakeResult? {
        guard let state = tasks[key], !isStopping else { return nil }
        tasks[key]!.lastTrigger = now
        if state.definition.persistent { actions.append(.persistTrigger(key, now.realtime)) }
        if let current = state.currentRunID, let run = runs[current] {
            actions.append(.report(.coalesced(run, trigger)))
            return WakeResult(run: run, coalesced: true)
        }
        let d = state.definition
        let run = Run(
            id: makeRunID(), key: key, trigger: trigger, attempt: 1, wakeID: wakeID, payload: payload,
            started: now, budget: d.budget, cancelAt: now.monotonic &+ d.cancelOffset,
            killAt: now.monotonic &+ d.budget.microseconds, phase: .running)
        runs[run.id] = run
        tasks[key]!.currentRunID = run.id
        tasks[key]!.lastActivation = now.monotonic
        actions.append(.start(run))
        actions.append(.report(.started(run)))
        return WakeResult(run: run, coalesced: false)
    }

    private mutating func cancelRun(
        _ id: String, reason: CancelReason, at now: ClockReading, actions: inout [SchedulerAction]
    ) -> Run? {
        guard var run = runs[id], let grace = tasks[run.key]?.definition.cancelGrace else { return nil }
        run.killAt = min(run.killAt, now.monotonic &+ grace.microseconds)
        if case .running = run.phase {
            run.phase = .cancelling(reason)
            runs[id] = run
            actions.append(.cancel(run))
            actions.append(.report(.cancelling(run)))
        } else {
            runs[id] = run
        }
        return run
    }

    private mutating func finish(_ id: String, termination: Termination?, at now: ClockReading)
        -> [SchedulerAction]
    {
        guard var run = runs.removeValue(forKey: id) else { return [] }
        run.termination = termination
        run.ended = now
        switch run.phase {
        case .running: run.outcome = (termination?.isSuccess ?? false) ? .completed : .failed
        case .cancelling(.budget): run.outcome = .expired
        case .cancelling: run.outcome = .cancelled
        case .killed(.budget): run.outcome = .killed
        case .killed: run.outcome = .cancelled
        }
        tasks[run.key]?.lastDeactivation = now.monotonic
        if tasks[run.key]?.currentRunID == id {
            tasks[run.key]!.currentRunID = nil
            tasks[run.key]!.lastRun = run
        }
        return [.report(.ended(run))]
    }

    private mutating func makeRunID() -> String {
        let hi = random.next() as UInt64
        let lo = random.next() as UInt64
        return hex16(hi) + hex16(lo)
    }

    private func hex16(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
