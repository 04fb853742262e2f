/// `taskctl upgrade`: taskd re-executes itself and the runs in progress go on. The old image
/// stops starting runs and cancels its Swift handlers' runs (`beginUpgrade`); the new one takes
/// the command runs over (`adopt`), under the deadlines they had.
extension Scheduler {
    /// An upgrade begins: no new run starts, and each active Swift handler's run is cancelled,
    /// reason `upgrade` (its acknowledged wakes stay on record, to run again in the new image);
    /// or `restart`, when systemd restarts taskd and the command runs stay with the run keeper.
    public mutating func beginUpgrade(at now: ClockReading, reason: CancelReason = .upgrade) -> [SchedulerAction] {
        isStopping = true
        var actions: [SchedulerAction] = []
        for id in runs.keys.sorted() {
            guard let run = runs[id], run.isActive, run.inProcess, run.cancelReason == nil else { continue }
            cancel(run, reason: reason, at: now, actions: &actions)
        }
        return endBatch(actions)
    }

    /// The upgrade did not happen (the new image could not be executed): runs start again.
    public mutating func abandonUpgrade(at now: ClockReading) -> [SchedulerAction] {
        guard isStopping else { return [] }
        isStopping = false
        return endBatch(pump(at: now))
    }

    /// The active Swift handlers' runs, which an upgrade waits for.
    public var activeInProcess: Int { runs.values.count { $0.isActive && $0.inProcess } }

    /// Takes over `run`, started by an earlier image of taskd: it goes on under the deadlines it
    /// had (its cancellation, its hard stop, its progress timeout), as its task's current run, or
    /// fenced when its task is gone or has another. False, and nothing changes, for a run that is
    /// not active or is known already.
    @discardableResult
    public mutating func adopt(_ run: Run) -> Bool {
        guard let started = run.started, run.isActive, runs[run.id] == nil else { return false }
        var run = run
        if tasks[run.key]?.inProgress.isEmpty == true {
            tasks[run.key]!.inProgress.append(run.id)
            tasks[run.key]!.lastActivation = started.monotonic
        } else if tasks[run.key]?.definition.overlap == .allow {
            tasks[run.key]!.inProgress.append(run.id)
        } else {
            run.fenced = true
        }
        if run.blocksSleep { runsBlockingSleep += 1 } else { runsDelayingSleep += 1 }
        inhibitors.runStarted = true
        // It holds a place of its task's group, beyond the size if need be: it runs already.
        run.waitingForGroup = false
        run.group = tasks[run.key]?.definition.concurrencyGroup?.name
        if let name = run.group { groups.hold(run.id, in: name) }
        runs[run.id] = run
        return true
    }
}

extension Scheduler {
    /// The runs cut short so far (`cutShort`), taken: for the next image to run them again.
    public mutating func takeCutShort() -> [CutRun] {
        defer { cutShort = [] }
        return cutShort
    }

    /// Runs again what the previous image cut short (trigger `resume`, the same attempt, wake id
    /// and payload); a run whose task is gone is left out. Returns the actions and how many ran.
    public mutating func replay(_ cut: [CutRun], at now: ClockReading) -> (count: Int, actions: [SchedulerAction]) {
        var actions: [SchedulerAction] = []
        var count = 0
        for run in cut where tasks[run.key] != nil {
            let request = TriggerRequest(
                trigger: .resume, attempt: run.attempt, wakeID: run.wakeID, payload: run.payload,
                previousAttempt: run.runID, scheduled: run.scheduledRealtime == 0 ? nil : run.scheduledRealtime)
            if trigger(run.key, request, at: now, actions: &actions) != nil { count += 1 }
        }
        return (count, endBatch(actions))
    }
}

extension Scheduler {
    /// Every task's timers, for the next image of an upgrade (`carryTimers`).
    public var timerCarries: [TimerCarry] {
        tasks.keys.sorted().map { key in
            let state = tasks[key]!
            return TimerCarry(
                kind: key.kind, identifier: key.identifier, pendingStartup: state.pendingStartup,
                lastTrigger: state.lastTrigger.map { [$0.monotonic, $0.realtime] },
                lastActivation: state.lastActivation, lastDeactivation: state.lastDeactivation,
                randomDelay: state.randomDelay, calendarDue: state.calendarDueRealtime)
        }
    }

    /// Takes on the timers of the image before an upgrade, for the tasks it knew: the start-up
    /// timers it had not fired (none for a task it had already started), and the instants its
    /// interval timers counted from. A task new in this image keeps the timers it started with.
    public mutating func carryTimers(_ carries: [TimerCarry], at now: ClockReading) {
        for carry in carries where tasks[carry.key] != nil {
            if let due = carry.calendarDue, tasks[carry.key]!.definition.onCalendar.isEmpty == false,
                due < (tasks[carry.key]!.calendarDueRealtime ?? .max)
            {
                tasks[carry.key]!.calendarDueRealtime = due
                tasks[carry.key]!.calendarDueMonotonic = now.monotonic &+ (due > now.realtime ? due - now.realtime : 0)
            }
            tasks[carry.key]!.pendingStartup = carry.pendingStartup
            if let t = carry.lastTrigger, t.count == 2 {
                tasks[carry.key]!.lastTrigger = ClockReading(monotonic: t[0], realtime: t[1])
            }
            tasks[carry.key]!.lastActivation = carry.lastActivation
            tasks[carry.key]!.lastDeactivation = carry.lastDeactivation
            tasks[carry.key]!.randomDelay = carry.randomDelay
        }
    }
}
