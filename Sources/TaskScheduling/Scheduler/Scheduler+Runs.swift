/// The scheduler's internals: how a trigger becomes a run (overlap, supersession, the slot queue),
/// and how a run ends (outcome, fencing, retry, the next queued run).
extension Scheduler {
    /// Applies `request` to `key`: joins, queues behind or supersedes the current run, or makes a new one.
    mutating func trigger(
        _ key: TaskKey, _ request: TriggerRequest, at now: ClockReading, actions: inout [SchedulerAction]
    )
        -> WakeResult?
    {
        // The fields this needs, not a copy of the state: a copy held while the table's state changes
        // shares its activity box, which the first change would then copy (an allocation a wake).
        guard !isStopping,
            case let (definition, currentRunID, retry)? = tasks[key].map({
                ($0.definition, $0.currentRunID, $0.retry)
            })
        else { return nil }
        tasks[key]!.lastTrigger = now
        if definition.persistent { actions.append(.persistTrigger(key, now.realtime)) }
        if !paused.isEmpty, paused.contains(key) {
            return pausedTrigger(
                key, makeRun(key, request, definition: definition, at: now), at: now, actions: &actions)
        }
        if currentRunID != nil, definition.overlap == .allow {
            return allow(key, request, definition: definition, at: now, actions: &actions)
        }
        if let currentID = currentRunID, var current = runs[currentID] {
            // task(id:): an id decides by itself; without one the task's Overlap= policy does.
            let supersedes = request.wakeID.map { $0 != current.wakeID } ?? (definition.overlap == .replace)
            // A payload unlike the run's is other work: it waits its turn rather than vanish into a
            // run that never sees it (a wake id alone decides, as `task(id:)` does).
            let otherWork =
                request.distinct
                || (request.wakeID == nil && request.payload != nil && request.payload != current.payload)
            if !supersedes && request.wakeID == nil && !request.distinct && definition.overlap == .skip {
                // Dropped, and said so: its wakes are answered. A slot taken over from another
                // host (`distinct`) is other work that no host may run otherwise: it waits its turn.
                if !request.records.isEmpty { actions.append(.settle(request.records)) }
                actions.append(.report(.skipped(current, request.trigger)))
                return WakeResult(run: current, disposition: .skipped)
            }
            if !supersedes && !otherWork && (request.wakeID != nil || definition.overlap == .coalesce) {
                current.records += request.records
                runs[currentID] = current
                actions.append(.report(.coalesced(current, request.trigger)))
                return WakeResult(run: current, disposition: .coalesced)
            }
            if !supersedes {
                return enqueue(key, request, at: now, actions: &actions)
            }
            _ = detach(currentID, reason: .superseded, at: now, actions: &actions)
            for id in tasks[key]!.queue { _ = detach(id, reason: .superseded, at: now, actions: &actions) }
        }
        var run = makeRun(key, request, definition: definition, at: now)
        run.after = request.after
        // `retry` is still the task's: superseding above cannot set one (only the end of the task's
        // own run does) nor clear one.
        if let retry {
            // A new run does the work the retry would have done: the retry is dropped, its wakes move over.
            run.records += retry.records
            run.previousAttemptID = retry.failedRunID
            tasks[key]!.retry = nil
        }
        // It becomes the current run: ahead of any other still in progress (a reload's restart).
        tasks[key]!.inProgress.insert(run.id, at: 0)
        return WakeResult(
            run: admit(run, definition: definition, at: now, actions: &actions), disposition: .started)
    }

    /// `Overlap=allow`: the trigger joins the run in progress with its wake id, or starts a run
    /// beside those in progress, or (`MaxInstances=` of them in progress) waits as with `queue`.
    private mutating func allow(
        _ key: TaskKey, _ request: TriggerRequest, definition: TaskDefinition, at now: ClockReading,
        actions: inout [SchedulerAction]
    ) -> WakeResult {
        let running = tasks[key]!.inProgress
        if let id = request.wakeID, let joined = running.first(where: { runs[$0]?.wakeID == id }) {
            runs[joined]!.records += request.records
            actions.append(.report(.coalesced(runs[joined]!, request.trigger)))
            return WakeResult(run: runs[joined]!, disposition: .coalesced)
        }
        guard definition.maxInstances == 0 || running.count < definition.maxInstances else {
            return enqueue(key, request, at: now, actions: &actions)
        }
        var run = makeRun(key, request, definition: definition, at: now)
        run.after = request.after
        tasks[key]!.inProgress.append(run.id)
        return WakeResult(
            run: admit(run, definition: definition, at: now, actions: &actions), disposition: .started)
    }

    /// `Overlap=queue`: the trigger waits behind the current run, or joins the last queued run when the queue is full.
    private mutating func enqueue(
        _ key: TaskKey, _ request: TriggerRequest, at now: ClockReading, actions: inout [SchedulerAction]
    ) -> WakeResult {
        // Read in place, not copied: see `trigger`.
        let (definition, queued, last) = tasks[key].map {
            ($0.definition, $0.queue.count, $0.queue.last ?? $0.currentRunID)
        }!
        if queued >= definition.queueLimit, let lastID = last {
            if request.payload != nil && request.payload != runs[lastID]!.payload {
                // Its wakes are answered: refused, and said so.
                if !request.records.isEmpty { actions.append(.settle(request.records)) }
                actions.append(.report(.refused(runs[lastID]!, request.trigger)))
                health[key, default: TaskHealth()].lastRefusal = TaskHealth.Decision(
                    trigger: request.trigger, runID: lastID, at: now.realtime)
                return WakeResult(run: runs[lastID]!, disposition: .refused)
            }
            runs[lastID]!.records += request.records
            actions.append(.report(.overflow(runs[lastID]!, request.trigger)))
            return WakeResult(run: runs[lastID]!, disposition: .overflow)
        }
        let run = makeRun(key, request, definition: definition, at: now)
        runs[run.id] = run
        tasks[key]!.queue.append(run.id)
        actions.append(.report(.queued(run)))
        return WakeResult(run: run, disposition: .queued)
    }

    private mutating func makeRun(
        _ key: TaskKey, _ request: TriggerRequest, definition d: TaskDefinition, at now: ClockReading
    ) -> Run {
        var run = Run(
            id: makeRunID(), key: key, trigger: request.trigger, attempt: request.attempt, wakeID: request.wakeID,
            payload: request.payload, queued: now, budget: d.budget, cancelGrace: d.cancelGrace,
            inProcess: d.handler == .swift)
        run.records = request.records
        run.previousAttemptID = request.previousAttempt
        run.scheduledRealtime = request.scheduled ?? now.realtime
        return run
    }

    /// The task's current run may start: now if a slot is free, else in the ready queue.
    /// `definition`, if given, is its task's (saving a look-up).
    mutating func admit(
        _ id: String, definition: TaskDefinition? = nil, at now: ClockReading, actions: inout [SchedulerAction]
    ) {
        guard let run = runs[id] else { return }
        admit(run, definition: definition, at: now, actions: &actions)
    }

    /// `admit` for a run at hand (a new one, or one the caller looked up): stores it, started if a
    /// slot is free, with no look-up of it by id; returns it as stored.
    @discardableResult
    private mutating func admit(
        _ run: Run, definition: TaskDefinition?, at now: ClockReading, actions: inout [SchedulerAction]
    ) -> Run {
        var run = run
        if !run.after.isEmpty, waitBehind(&run, actions: &actions) { return run }
        if !allConditionsHold, let d = definition ?? tasks[run.key]?.definition,
            !d.conditions.isDisjoint(with: unheldConditions)
        {
            waitForConditions(&run, definition: d, at: now, actions: &actions)
            return run
        }
        if !groups.sizes.isEmpty, let d = definition ?? tasks[run.key]?.definition,
            !passGroupGate(&run, definition: d, actions: &actions)
        {
            return run
        }
        if ready.isEmpty && activeCount < maxConcurrentRuns && !isSleeping && !isDraining {
            if let d = definition ?? tasks[run.key]?.definition {
                markStarted(&run, definition: d, at: now, actions: &actions)
            }
            runs[run.id] = run
            return run
        }
        runs[run.id] = run
        makeReady(run.id)
        actions.append(.report(.waiting(run)))
        return run
    }

    /// Puts a run in the ready queue: `appRefresh` ahead of every other kind, then FIFO.
    private mutating func makeReady(_ id: String) {
        let isRefresh = runs[id]?.key.kind == TaskKind.appRefresh
        let index =
            isRefresh ? (ready.firstIndex { runs[$0]?.key.kind != TaskKind.appRefresh } ?? ready.count) : ready.count
        ready.insert(id, at: index)
    }

    /// The run waits for its task's conditions, holding no slot; stores it and says so.
    private mutating func waitForConditions(
        _ run: inout Run, definition d: TaskDefinition, at now: ClockReading, actions: inout [SchedulerAction]
    ) {
        run.waitingFor = d.conditions.intersection(unheldConditions).sorted()
        runs[run.id] = run
        // Waiting for its conditions, it holds no place of its group either.
        if let name = run.group {
            runs[run.id]!.group = nil
            leaveGroup(run.id, name, at: now, actions: &actions)
        }
        if !deferred.contains(run.id) {
            deferred.append(run.id)
            if d.maxDefer.microseconds > 0 { deferUntil[run.id] = run.queued.monotonic &+ d.maxDefer.microseconds }
        }
        actions.append(.report(.deferred(run)))
    }

    /// Starts waiting runs while slots are free; runs whose conditions came to hold join them first,
    /// and a ready run whose conditions no longer hold goes back to wait for them.
    mutating func pump(at now: ClockReading) -> [SchedulerAction] {
        var actions: [SchedulerAction] = []
        for id in deferred {
            guard let d = runs[id].flatMap({ tasks[$0.key]?.definition }),
                d.conditions.isDisjoint(with: unheldConditions)
            else { continue }
            deferred.removeAll { $0 == id }
            deferUntil[id] = nil
            runs[id]!.waitingFor = []
            if !groups.sizes.isEmpty, var run = runs[id] {
                let passed = passGroupGate(&run, definition: d, actions: &actions)
                runs[id] = run
                if !passed { continue }
            }
            makeReady(id)
        }
        while !isStopping, !isSleeping, !isDraining, !ready.isEmpty, activeCount < maxConcurrentRuns {
            let id = ready.removeFirst()
            if !allConditionsHold, var run = runs[id], let d = tasks[run.key]?.definition,
                !d.conditions.isDisjoint(with: unheldConditions)
            {
                waitForConditions(&run, definition: d, at: now, actions: &actions)
                continue
            }
            start(id, at: now, actions: &actions)
        }
        return actions
    }

    /// The budget starts now, under the task's current definition (`definition`, if given).
    private mutating func start(
        _ id: String, definition: TaskDefinition? = nil, at now: ClockReading, actions: inout [SchedulerAction]
    ) {
        guard var run = runs[id], let d = definition ?? tasks[run.key]?.definition else { return }
        markStarted(&run, definition: d, at: now, actions: &actions)
        runs[id] = run
    }

    /// Starts `run`'s budget now under definition `d`, and says so in `actions`; the caller stores it.
    private mutating func markStarted(
        _ run: inout Run, definition d: TaskDefinition, at now: ClockReading, actions: inout [SchedulerAction]
    ) {
        run.started = now
        run.budget = d.budget
        run.cancelGrace = d.cancelGrace
        run.inProcess = d.handler == .swift
        run.cancelAt = now.monotonic &+ d.cancelOffset
        run.killAt = now.monotonic &+ d.budget.microseconds
        run.progressTimeout = d.progressTimeout.microseconds
        run.phase = .running
        run.blocksSleep = d.sleep == .block
        if run.blocksSleep { runsBlockingSleep += 1 } else { runsDelayingSleep += 1 }
        inhibitors.runStarted = true
        tasks[run.key]!.lastActivation = now.monotonic
        actions.append(.start(run))
        actions.append(.report(.started(run)))
    }

    /// With no run in progress, the next queued run of the task (if any) becomes its current run;
    /// with `Overlap=allow`, queued runs start while there is room beside those in progress.
    mutating func promoteNext(_ key: TaskKey, at now: ClockReading, actions: inout [SchedulerAction]) {
        // After most ends nothing waits: one look-up, in place, says so.
        guard tasks.read(key, { !$0.queue.isEmpty }) == true else { return }
        if let state = tasks[key], !state.inProgress.isEmpty, state.definition.overlap == .allow,
            let next = state.queue.first,
            state.definition.maxInstances == 0 || state.inProgress.count < state.definition.maxInstances
        {
            tasks[key]!.queue.removeFirst()
            tasks[key]!.inProgress.append(next)
            admit(next, at: now, actions: &actions)
            return promoteNext(key, at: now, actions: &actions)
        }
        guard tasks[key]?.inProgress.isEmpty == true, let next = tasks[key]?.queue.first else { return }
        tasks[key]!.queue.removeFirst()
        tasks[key]!.inProgress.append(next)
        if let retry = tasks[key]!.retry {
            runs[next]!.records += retry.records
            tasks[key]!.retry = nil
        }
        admit(next, at: now, actions: &actions)
    }

    /// The run is over: its outcome, then (for the task's own run) its retry or the next queued run.
    mutating func finish(_ id: String, termination: Termination?, at now: ClockReading) -> [SchedulerAction] {
        guard var run = runs.removeValue(forKey: id) else { return [] }
        ready.removeAll { $0 == id }
        if deferUntil.removeValue(forKey: id) != nil || !run.waitingFor.isEmpty { deferred.removeAll { $0 == id } }
        run.termination = termination
        run.ended = now
        run.outcome = Self.outcome(of: run)
        if case .cancelling = run.phase, run.started != nil { run.partial = termination?.isSuccess ?? false }
        var actions = SchedulerAction.batch()
        actions.append(.report(.ended(run)))
        if run.started != nil {
            if run.blocksSleep { runsBlockingSleep -= 1 } else { runsDelayingSleep -= 1 }
            tasks[run.key]?.lastDeactivation = now.monotonic
        }
        if let name = run.group { leaveGroup(id, name, at: now, actions: &actions) }
        if !behind.isEmpty { releaseBehind(id, at: now, actions: &actions) }
        // The fields this needs, not a copy of the state: see `trigger`.
        guard
            case let (policy, nextQueued, place)? = tasks[run.key].flatMap({ state in
                state.inProgress.firstIndex(of: id).map { (state.definition.retry, state.queue.first, $0) }
            })
        else {
            // Fenced, or its task is gone. A run cut short by shutdown answers nothing: its wakes run again.
            let answered = !(run.cancelReason?.keepsWakes ?? false) || (termination?.isSuccess ?? false)
            if answered && !run.records.isEmpty { actions.append(.settle(run.records)) }
            actions += pump(at: now)
            return actions
        }
        tasks[run.key]!.inProgress.remove(at: place)
        tasks[run.key]!.lastRun = run
        let retrying =
            !isStopping && run.attempt < policy.maxAttempts && !run.partial
            && policy.allowsRetry(outcome: run.outcome!, termination: termination)
        if retrying {
            if let pending = tasks[run.key]!.retry {
                // Another run of the task (`Overlap=allow`) failed first: its retry does this work too.
                tasks[run.key]!.retry!.records = pending.records + run.records
            } else if let next = nextQueued {
                // A queued run starts at once and does the work; the failed run's wakes ride with it.
                runs[next]!.records += run.records
            } else {
                let delay = policy.delay(after: run.attempt, unit: randomUnit())
                tasks[run.key]!.retry = PendingRetry(
                    due: now.monotonic &+ delay, attempt: run.attempt + 1, wakeID: run.wakeID, payload: run.payload,
                    records: run.records, failedRunID: run.id)
                actions.append(.report(.retryScheduled(run, delay: delay)))
            }
        } else if run.cancelReason?.runsAgain == true && run.started != nil && !(termination?.isSuccess ?? false)
            && run.records.isEmpty
        {
            // Cut short by an upgrade or a restart: it runs again in the next image (its wakes, if
            // it answers some, are on disk and run again from there).
            cutShort.append(CutRun(run))
        } else if run.cancelReason == .sleep && !(termination?.isSuccess ?? false) {
            // Cut short by sleep: it runs again after the resume, answering the same wakes.
            cutBySleep[run.key, default: []].append(
                TriggerRequest(
                    trigger: .resume, attempt: run.attempt, wakeID: run.wakeID, payload: run.payload,
                    records: run.records,
                    previousAttempt: run.id, scheduled: run.scheduledRealtime == 0 ? nil : run.scheduledRealtime))
        } else if !run.records.isEmpty
            && (!(run.cancelReason?.keepsWakes ?? false) || (termination?.isSuccess ?? false))
        {
            actions.append(.settle(run.records))
        }
        recordEnd(run, retrying: retrying, at: now, actions: &actions)
        promoteNext(run.key, at: now, actions: &actions)
        actions += pump(at: now)
        return actions
    }

    static func outcome(of run: Run) -> RunOutcome {
        switch run.phase {
        case .queued: return .cancelled
        case .running: return (run.termination?.isSuccess ?? false) ? .completed : .failed
        case .cancelling(.budget): return .expired
        case .cancelling: return .cancelled
        case .killed(.budget): return .killed
        case .killed: return .cancelled
        }
    }

    /// Draws the `RandomizedDelaySec=` delay for the task's next arming (systemd re-draws it each time).
    mutating func drawRandomDelay(_ key: TaskKey) {
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

    /// Uniform in [0, 1), from the injected generator.
    private mutating func randomUnit() -> Double { Double(random.next() >> 11) / Double(UInt64(1) << 53) }

    private mutating func makeRunID() -> String {
        let hi = random.next() as UInt64
        let lo = random.next() as UInt64
        return HexID.make(hi, lo)
    }
}
