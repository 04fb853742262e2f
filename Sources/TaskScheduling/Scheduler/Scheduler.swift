/// The pure scheduling core: it owns tasks and runs, and turns inputs (wakes, time passing, handler
/// ends, cancels, reloads) into `SchedulerAction`s. It never reads a clock or sleeps: every input
/// carries the time, and randomness comes from the injected generator, so tests drive it by hand.
///
/// A run is `queued` until it may start (a slot of `maxConcurrentRuns` is free, and it is the
/// task's current run), then `running`; its budget starts when it starts. A run cancelled for any
/// reason but its budget or shutdown is *fenced*: detached from its task at once, so its late
/// result is stale, never the task's last result, and never retried.
///
/// With `WatchSleep=` it also decides logind's inhibitor locks (`.inhibit`/`.release`): the sleep
/// delay lock from the first start on, the block lock while a `Sleep=block` run is active.
public struct Scheduler: Sendable {
    package internal(set) var tasks = TaskTable()
    public internal(set) var runs: [String: Run] = [:]
    /// Runs that start as soon as a slot is free: `appRefresh` ahead of every other kind, then FIFO.
    public internal(set) var ready: [String] = []
    /// Runs that wait for their task's conditions, oldest first; they hold no slot.
    public internal(set) var deferred: [String] = []
    /// The concurrency groups' places, and the runs waiting for one (`Scheduler+Groups`).
    var groups = GroupGate()
    /// Runs that wait for others to end (`After=`), by the run they wait for (`Scheduler+Order`).
    var behind: [String: [String]] = [:]
    /// When a deferred run gives up (`MaxDeferSec=`), by run id.
    var deferUntil: [String: UInt64] = [:]
    /// The conditions that do not hold now (`conditionsChanged`); none until told otherwise.
    public internal(set) var unheldConditions: Set<TaskCondition> = []
    /// True while every condition holds: no run needs its task's conditions looked at.
    var allConditionsHold: Bool { unheldConditions.isEmpty }
    /// `[Daemon] MaxConcurrentRuns=`: how many handlers may run at once.
    public internal(set) var maxConcurrentRuns: Int
    /// True once `shutdown` was called: no new runs start.
    public internal(set) var isStopping = false
    /// True from `prepareForSleep` to `resumed`: no new runs start.
    public internal(set) var isSleeping = false
    /// True from `drain` to `endDrain` (`taskctl drain`): no new runs start.
    public internal(set) var isDraining = false
    /// Whether logind's sleep is watched (`WatchSleep=`): the delay inhibitor is then held from the first run on.
    public let watchesSleep: Bool
    /// Runs cut short by sleep, by task, in the order they ended: each runs again at `resumed`
    /// (trigger `resume`); a task has more than one only with `Overlap=allow`.
    var cutBySleep: [TaskKey: [TriggerRequest]] = [:]
    /// Runs an upgrade or a restart cut short (reason `upgrade`, `restart`) that answer no
    /// acknowledged wake: the next image runs each again (`replay`).
    public internal(set) var cutShort: [CutRun] = []
    /// Active runs that the system's sleep waits for (all but those of `Sleep=block` tasks): at
    /// zero, while it sleeps, the delay inhibitor goes. Counted as runs start and end.
    public internal(set) var runsDelayingSleep = 0
    /// Active runs of `Sleep=block` tasks (`Run.blocksSleep`), counted as runs start and end.
    var runsBlockingSleep = 0
    /// The inhibitor locks taken and released by `.inhibit`/`.release` actions.
    var inhibitors: InhibitorLocks
    /// How tasks have been doing (`TaskHealth`), for those that have ended a run or been paused.
    var health: [TaskKey: TaskHealth] = [:]
    /// Paused tasks, and when the timed pauses end (monotonic).
    var paused: Set<TaskKey> = []
    var pauseEnds: [TaskKey: UInt64] = [:]
    /// When each task with `ExpectSuccessWithinSec=` becomes overdue (monotonic), until it is.
    var overdueAt: [TaskKey: UInt64] = [:]
    var random: any RandomNumberGenerator & Sendable
    /// When the scheduler started, on both clocks.
    public let startedAt: ClockReading

    /// The machine's identity (its /etc/machine-id), for `FixedRandomDelay=`.
    public let machineID: String
    /// Timers `fire(at:)` fired that `rearmFired(at:)` has not re-armed yet.
    var firedTimers: [FiredTimer] = []
    /// Swift handlers abandoned at their budget's end that have not returned yet: run id → when a
    /// retry of it may start anyway (one `CancelGraceSec=` after the abandonment).
    var abandoned: [String: UInt64] = [:]

    /// A scheduler of `definitions`, with what was kept on disk; `watchesSleep` is `[Daemon] WatchSleep=`.
    public init(
        definitions: [TaskDefinition], startedAt: ClockReading,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), machineID: String = "",
        persistedTriggers: [TaskKey: UInt64] = [:], persistedRequests: [TaskKey: UInt64] = [:],
        persistedHealth: [TaskKey: TaskHealth] = [:], maxConcurrentRuns: Int = 4, watchesSleep: Bool = false
    ) {
        self.inhibitors = InhibitorLocks(watchesSleep: watchesSleep)
        self.random = random
        self.watchesSleep = watchesSleep
        self.startedAt = startedAt
        self.machineID = machineID
        self.maxConcurrentRuns = max(1, maxConcurrentRuns)
        tasks.reserveCapacity(definitions.count)
        for d in definitions {
            tasks[d.key] = TaskState(
                definition: d, daemonStart: startedAt, persistedTrigger: persistedTriggers[d.key],
                persistedRequest: persistedRequests[d.key])
            drawRandomDelay(d.key)
        }
        groups.sizes = Self.groupSizes(definitions)
        for (key, h) in persistedHealth where tasks[key] != nil {
            health[key] = h
            if let pause = h.pause { armPause(key, pause, at: startedAt) }
        }
        for d in definitions where d.expectSuccessWithin.microseconds > 0 || health[d.key]?.overdue == true {
            armOverdue(d.key, at: startedAt)
        }
    }

    /// Resolves targets against the current tasks.
    public var resolver: TargetResolver { TargetResolver(tasks: tasks) }

    /// Runs whose handler is running now (they hold a slot).
    public var activeCount: Int { runsDelayingSleep + runsBlockingSleep }

    /// The earliest monotonic instant at which `advance(to:)` has something to do.
    public var nextDeadline: UInt64? {
        var next: UInt64? = nil
        func consider(_ t: UInt64) { next = min(next ?? t, t) }
        if !isStopping, let due = tasks.nextDueInstant { consider(due) }
        for run in runs.values {
            switch run.phase {
            case .running: consider(run.cancelAt)
            case .cancelling: consider(run.killAt)
            case .queued, .killed: break
            }
            if let deadline = run.progressDeadline { consider(deadline) }
            if run.progressUntold, let told = run.progressToldAt { consider(told &+ Self.progressInterval) }
        }
        for until in deferUntil.values { consider(until) }
        for due in overdueAt.values { consider(due) }
        for end in pauseEnds.values { consider(end) }
        return next
    }

    // MARK: Inputs

    /// A wake request for every task the target names (see `wake(key:…)`).
    public mutating func wake(
        target: String, wakeID: String? = nil, payload: String? = nil, at now: ClockReading
    ) throws(TargetError) -> (runs: [WakeResult], actions: [SchedulerAction]) {
        var results: [WakeResult] = []
        var actions = SchedulerAction.batch()
        for key in try resolver.resolve(target) {
            let request = TriggerRequest(trigger: .wake, wakeID: wakeID, payload: payload)
            if let result = trigger(key, request, at: now, actions: &actions) { results.append(result) }
        }
        return (results, endBatch(actions))
    }

    /// A wake of one task. With a `wakeID` it is SwiftUI's `task(id:)`: the same id as the current
    /// run joins it, another id supersedes it, whatever `Overlap=` says. `record` names the durable
    /// record of the acknowledged wake, settled when the run that answers it ends for good.
    public mutating func wake(
        key: TaskKey, wakeID: String? = nil, payload: String? = nil, record: String? = nil,
        acknowledged: UInt64? = nil, at now: ClockReading
    ) -> (result: WakeResult?, actions: [SchedulerAction]) {
        var actions = SchedulerAction.batch()
        let request = TriggerRequest(
            trigger: .wake, wakeID: wakeID, payload: payload, records: record.map { [$0] } ?? [],
            scheduled: acknowledged)
        let result = trigger(key, request, at: now, actions: &actions)
        return (result, endBatch(actions))
    }

    /// One wake of several tasks (a target naming a kind, or several tasks): a wake of each, with
    /// its own durable record; their runs go in `After=` order. Results in the order given.
    public mutating func wake(
        _ wakes: [(key: TaskKey, record: String?)], wakeID: String? = nil, payload: String? = nil,
        acknowledged: UInt64? = nil, at now: ClockReading
    ) -> (results: [WakeResult], actions: [SchedulerAction]) {
        var actions = SchedulerAction.batch()
        let requests = wakes.map { wake in
            (
                wake.key,
                TriggerRequest(
                    trigger: .wake, wakeID: wakeID, payload: payload, records: wake.record.map { [$0] } ?? [],
                    scheduled: acknowledged)
            )
        }
        let results = trigger(requests, at: now, actions: &actions)
        return (wakes.compactMap { results[$0.key] }, endBatch(actions))
    }

    /// The conditions that hold changed: runs waiting for them start (slots allowing), and a run in
    /// progress whose task needs one that no longer holds is cancelled (`ConditionLost=cancel`,
    /// reason `condition-lost`), as at its budget: its hard stop one `CancelGraceSec=` later.
    public mutating func conditionsChanged(unheld: Set<TaskCondition>, at now: ClockReading) -> [SchedulerAction] {
        guard unheld != unheldConditions else { return [] }
        unheldConditions = unheld
        var actions: [SchedulerAction] = []
        for id in runs.keys.sorted() {
            guard var run = runs[id], case .running = run.phase,
                let d = tasks[run.key]?.definition, d.conditionLost == .cancel, !d.conditions.isDisjoint(with: unheld)
            else { continue }
            run.lostConditions = d.conditions.intersection(unheld).sorted()
            cancel(run, reason: .conditionLost, at: now, actions: &actions)
        }
        return endBatch(actions + pump(at: now))
    }

    /// The least time between two `progress` events of one run (µs): a handler may report as often
    /// as it likes; the journal and watchers hear at most this often, the last report always.
    public static let progressInterval: UInt64 = 1_000_000

    /// A command said its result (`RESULT=`, JSON text); the last one given is the run's.
    public mutating func recordResult(runID: String, _ result: String) {
        guard runs[runID]?.isActive == true else { return }
        runs[runID]!.result = result
    }

    /// The run's handler reported progress (`completed` of `total`) and/or a status: kept on the
    /// run at once (`Status` shows it, `ProgressTimeoutSec=` counts from it), told as a `progress`
    /// event at most once per `progressInterval`, the latest report always told in the end.
    public mutating func progress(
        runID: String, completed: Int64?, total: Int64?, status: String?, at now: ClockReading
    ) -> [SchedulerAction] {
        guard var run = runs[runID], run.isActive else { return [] }
        var progress = run.progress ?? RunProgress(reportedAt: now.monotonic)
        if let completed { progress.completed = completed }
        if completed != nil || total != nil { progress.total = total }
        if let status { progress.status = RunProgress.clipped(status) }
        progress.reportedAt = now.monotonic
        run.progress = progress
        var actions: [SchedulerAction] = []
        if let told = run.progressToldAt, now.monotonic < told &+ Self.progressInterval {
            run.progressUntold = true
        } else {
            run.progressToldAt = now.monotonic
            run.progressUntold = false
            actions.append(.report(.progress(run)))
        }
        runs[runID] = run
        return actions
    }

    /// A trigger of `key` as a timer, a retry or a wake would make it (`attempt` for a retry), for
    /// a test driver that starts one run of a task the way the daemon would.
    package mutating func trigger(
        _ key: TaskKey, _ trigger: Trigger, attempt: Int = 1, wakeID: String? = nil, payload: String? = nil,
        at now: ClockReading
    ) -> (result: WakeResult?, actions: [SchedulerAction]) {
        var actions: [SchedulerAction] = []
        let request = TriggerRequest(trigger: trigger, attempt: attempt, wakeID: wakeID, payload: payload)
        let result = self.trigger(key, request, at: now, actions: &actions)
        return (result, endBatch(actions))
    }

    /// The task's handler asks for a run `delay` µs from now (Apple's `earliestBeginDate`): it
    /// replaces any earlier request, fires as a timer (trigger `timer`, after the random delay),
    /// and is kept across restarts (a time missed meanwhile fires at start).
    public mutating func requestRun(_ key: TaskKey, after delay: UInt64, at now: ClockReading) -> [SchedulerAction] {
        guard tasks[key] != nil else { return [] }
        let realtime = now.realtime &+ delay
        tasks[key]!.request(atRealtime: realtime, now: now)
        return [.persistRequest(key, realtime)]
    }

    /// Time passed: fires due timers and retries, signals budget cancellation, sends hard stops.
    /// The same as `fire(at:)` followed by `rearmFired(at:)`.
    public mutating func advance(to now: ClockReading) -> [SchedulerAction] {
        let actions = fire(at: now)
        rearmFired(at: now)
        return actions
    }

    /// `advance(to:)` up to its actions, for a caller that starts handlers as early as it can: the
    /// timers that fired are re-armed (next elapse searched, random delay drawn) only by
    /// `rearmFired(at:)`, which must follow before the schedule is read (`nextDeadline`, `tasks`).
    public mutating func fire(at now: ClockReading) -> [SchedulerAction] {
        rearmFired(at: now)  // a previous `fire` whose re-arming was left out
        var actions = SchedulerAction.batch()
        for id in runs.keys.sorted() { passTime(id, at: now, actions: &actions) }
        // A run that waited its MaxDeferSec= for its conditions gives up.
        for id in deferred where deferUntil[id].map({ $0 <= now.monotonic }) == true {
            cancel(runs[id]!, reason: .conditionTimeout, at: now, actions: &actions)
        }
        if !overdueAt.isEmpty || !pauseEnds.isEmpty { checkHealth(at: now, actions: &actions) }
        // An abandoned attempt past its bound no longer holds a retry back.
        if !abandoned.isEmpty { abandoned = abandoned.filter { $0.value > now.monotonic } }
        guard !isStopping else { return endBatch(actions) }
        var elapsed: [(TaskKey, TriggerRequest)] = []
        for key in tasks.due(atOrBefore: now.monotonic) {
            guard var state = tasks[key] else { continue }
            if let retry = state.retry, retry.due <= now.monotonic, let until = abandoned[retry.failedRunID],
                now.monotonic < until
            {
                // Its attempt still runs, abandoned: the retry waits for it to return, at most until `until`.
                tasks[key]!.retry!.due = until
                if let failed = state.lastRun, failed.id == retry.failedRunID {
                    actions.append(.report(.retryWaits(failed, until: until - now.monotonic)))
                }
                continue
            }
            if let retry = state.retry, retry.due <= now.monotonic {
                abandoned[retry.failedRunID] = nil
                tasks[key]!.retry = nil
                let request = TriggerRequest(
                    trigger: .retry, attempt: retry.attempt, wakeID: retry.wakeID, payload: retry.payload,
                    records: retry.records, previousAttempt: retry.failedRunID,
                    scheduled: now.realtime(at: retry.due))
                _ = trigger(key, request, at: now, actions: &actions)
                state = tasks[key]!
            }
            guard let due = state.nextElapse, due <= now.monotonic else { continue }
            if let requested = state.requestedMonotonic, requested &+ state.randomDelay <= now.monotonic {
                actions.append(.persistRequest(key, nil))  // spent: `rearmFired` clears it
            }
            // Every timer due now makes one trigger: `startup` if an OnStartupSec= is among them.
            let isStartup = state.pendingStartup.first.map { $0 <= now.monotonic } ?? false
            let calendarFired = state.calendarDueMonotonic.map { $0 <= now.monotonic } ?? false
            firedTimers.append(
                FiredTimer(
                    key: key, calendarAfter: calendarFired ? max(now.realtime, state.calendarDueRealtime ?? 0) : nil))
            // Missed elapses (downtime, sleep): one `catchup` trigger each, with its own time.
            for missed in state.catchUp {
                _ = trigger(key, TriggerRequest(trigger: .catchup, scheduled: missed), at: now, actions: &actions)
            }
            guard state.catchUp.isEmpty else { continue }
            let kind: Trigger = isStartup ? .startup : .timer
            // The nominal elapse: a calendar's wall-clock time, else the timer's, before the random delay.
            let scheduled =
                calendarFired ? state.calendarDueRealtime : state.nextTimer.map { now.realtime(at: $0) }
            elapsed.append((key, TriggerRequest(trigger: kind, scheduled: scheduled)))
        }
        // The timers due at this moment are one trigger: their runs go in `After=` order.
        _ = trigger(elapsed, at: now, actions: &actions)
        return endBatch(actions)
    }

    /// Re-arms the timers the last `fire(at:)` fired: start-up timers that elapsed are spent, the
    /// calendar's next elapse is searched, `OnUnitActiveSec=` counts from now, a new random delay
    /// is drawn. Does nothing if nothing fired.
    public mutating func rearmFired(at now: ClockReading) {
        for fired in firedTimers {
            tasks[fired.key]?.rearm(fired: fired, at: now)
            drawRandomDelay(fired.key)
        }
        firedTimers.removeAll(keepingCapacity: true)
    }

    /// The handler of `runID` ended (`result`: what a Swift handler returned, as JSON). A run the
    /// scheduler no longer tracks (abandoned) is ignored.
    public mutating func handlerEnded(
        runID: String, termination: Termination, result: String? = nil, usage: RunUsage? = nil, at now: ClockReading
    ) -> [SchedulerAction] {
        // Found once, changed in place: `runs[runID] == nil` copies the run to compare it.
        guard let place = runs.index(forKey: runID) else {
            guard abandoned.removeValue(forKey: runID) != nil else { return endBatch([]) }
            // An abandoned attempt returned at last: its retry, waiting for it, may start now.
            for key in tasks.keys where tasks[key]!.retry?.failedRunID == runID {
                tasks[key]!.retry!.due = min(tasks[key]!.retry!.due, now.monotonic)
            }
            return []
        }
        if let result { runs.values[place].result = result }
        runs.values[place].usage = usage
        return endBatch(finish(runID, termination: termination, at: now))
    }

    /// The wall clock jumped or the time zone changed: every calendar timer is computed again from
    /// its last trigger (or the start), as systemd does, so that a backward jump does not fire an
    /// elapse twice, and what a forward jump skipped is caught up as `CatchUp=` says (once, by
    /// default). Monotonic timers are untouched.
    /// Returns the names of the calendar tasks it re-armed.
    public mutating func clockChanged(at now: ClockReading) -> [String] {
        var moved: [String] = []
        for key in tasks.keys where tasks[key]!.requestedRealtime != nil {
            tasks[key]!.request(atRealtime: tasks[key]!.requestedRealtime!, now: now)
        }
        for key in tasks.keys.sorted() where !(tasks[key]!.definition.onCalendar.isEmpty) {
            let base = tasks[key]!.lastTrigger?.realtime ?? startedAt.realtime
            tasks[key]!.calendarMemo = []  // the zone may have changed: search every entry again
            tasks[key]!.catchUpCalendar(after: base, now: now)
            moved.append(key.identifier)
        }
        return moved
    }
}
