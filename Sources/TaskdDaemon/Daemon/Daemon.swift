import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdIO
import TaskdProcess
import TaskdProtocol

/// The daemon: a thin interpreter between the outside world and the pure `Scheduler`. Inputs
/// (requests, handler ends, machine events, its timer) go to the scheduler; `perform` carries out
/// the actions it returns through the ports (`DaemonPorts`) and hands each event to its observers
/// (journal, metrics, history, watchers). It runs on the event loop's thread, where requests are
/// read and timers and exits are seen, so none of them waits for a thread hand-off.
package actor Daemon {
    package nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    var scheduler: Scheduler
    /// The outside world: clock, launcher, machine, store, journal, fleet (`DaemonPorts`).
    let ports: DaemonPorts
    let swift: SwiftHandlerLauncher
    let history: RunHistory
    let watchers: RunWatchers
    let metrics: MetricsPublisher
    let status: ServiceStatus
    /// Who hears of every event, in order: the journal, the metrics, the history, the watchers,
    /// and whoever subscribed (`subscribe`).
    var observers: [any RunEventObserver]
    /// The features with state of their own, in the order their hooks are called (`DaemonComponent`).
    let components: [any DaemonComponent]
    /// The deadline timer, armed for the scheduler's next deadline.
    var timer: (any DaemonTimer)?
    var timerDeadline: UInt64?
    var recordRandom = SystemRandom()

    nonisolated var clock: any DaemonClock { ports.clock }
    var journal: EventJournal { ports.journal }
    var store: any RunStore { ports.store }
    var commands: any CommandLauncher { ports.commands }

    package init(
        config: LoadedConfig, handlers: [String: TaskHandler], records: [TaskKey: TaskRecord], ports: DaemonPorts
    ) {
        self.ports = ports
        scheduler = Scheduler(
            definitions: config.tasks, startedAt: ports.clock.now(), random: ports.random,
            machineID: ports.machineID, persistedTriggers: records.compactMapValues(\.lastTriggerUSec),
            persistedRequests: records.compactMapValues(\.requestedUSec),
            persistedHealth: records.compactMapValues(\.knownHealth),
            maxConcurrentRuns: config.daemon.effectiveMaxConcurrentRuns,
            watchesSleep: config.daemon.watchSleep ?? true)
        swift = SwiftHandlerLauncher(handlers: handlers)
        history = RunHistory(records: records, store: ports.store, tasks: config.tasks)
        watchers = RunWatchers(clock: ports.clock)
        metrics = MetricsPublisher(file: config.daemon.metricsFile, clock: ports.clock)
        status = ServiceStatus(notifier: ports.notifier, clock: ports.clock)
        observers = [JournalObserver(journal: ports.journal), metrics, history, watchers]
        components = Self.kinds.map { $0.init(config: config, ports: ports) }
        ports.journal.checkChains(config.tasks, resolver: scheduler.resolver)
    }

    /// The kinds of component, in the order they hear of events: the fleet before the others (it
    /// holds back a run's start until its claim is won). A new feature with state of its own is a line here.
    static var kinds: [any DaemonComponent.Type] {
        [
            AccessControl.self, FleetClaims.self, MachineLink.self, Submissions.self, ActiveRuns.self, Drains.self,
            Upgrades.self,
        ]
    }

    /// The component of type `C` (every kind is registered once, at `init`).
    package func component<C: DaemonComponent>(_ type: C.Type) -> C {
        for component in components { if let found = component as? C { return found } }
        preconditionFailure("no component \(C.self)")
    }

    /// Replays the wakes acknowledged before a crash or stop that had not been answered, then
    /// fires what is due at start-up (`OnStartupSec=0`) and arms the timer.
    package func start(recovering wakes: [WakeRecord]) {
        // The components first: a replayed wake of a task that needs AC power waits for it.
        for component in components { component.start(in: self) }
        let (actions, dropped) = scheduler.replay(wakes, at: clock.now())
        journal.wakesRecovered(wakes.count, dropped: dropped.count)
        if !dropped.isEmpty { store.settle(dropped) }
        perform(actions)
        tick()
    }

    package var taskCount: Int { scheduler.tasks.count }

    /// Adds an observer of every event from now on (after the daemon's own).
    package func subscribe(_ observer: any RunEventObserver & Sendable) { observers.append(observer) }

    // MARK: Time

    /// Time passed. The handlers it starts start before the timers that fired are re-armed:
    /// searching a calendar's next elapse is the costliest part of a firing, and no start needs it.
    func tick() {
        timerDeadline = nil
        component(MachineLink.self).refreshSampled(in: self)
        let now = clock.now()
        watchers.releaseDue(at: now.monotonic)
        let rest = startRuns(in: scheduler.fire(at: now))
        afterHandlersStart { daemon in
            daemon.scheduler.rearmFired(at: now)
            daemon.perform(rest)
        }
    }

    /// Starts the runs among `actions`; returns the other actions and the ends of runs that could
    /// not start, for `afterHandlersStart`.
    func startRuns(in actions: [SchedulerAction]) -> [SchedulerAction] {
        var rest: [SchedulerAction] = []
        for action in actions {
            guard case .start(let run) = action else {
                rest.append(action)
                continue
            }
            rest += start(run)
        }
        return rest
    }

    /// Runs `body` on the actor once the Swift handlers started so far have begun: they run on
    /// this thread as soon as the event or job that started them returns, before anything else.
    func afterHandlersStart(_ body: @escaping @Sendable (isolated Daemon) -> Void) {
        EventLoop.shared.afterHandlerJobs { [self] in isolatedOnLoop(body) }
    }

    /// Arms the deadline timer for the scheduler's next deadline, or the next held notice's if that
    /// comes first. A timer armed earlier than that is left alone: it fires once early, `tick`
    /// finds nothing due and arms it then. A run that ends before its budget (most do) so costs no
    /// system call, where disarming cost one per run.
    func armTimer(rearm: Bool = false) {
        if rearm { timerDeadline = nil }
        var next = scheduler.nextDeadline
        if let due = watchers.nextDue { next = min(next ?? due, due) }
        guard next != timerDeadline else { return }
        if !rearm, let armed = timerDeadline, next.map({ $0 > armed }) ?? true { return }
        timerDeadline = next
        if timer == nil { timer = clock.makeTimer { [weak self] in self?.onLoop { $0.tick() } } }
        timer?.arm(at: next)
    }

    // MARK: Performing actions

    func perform(_ actions: [SchedulerAction]) {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .start(let run): queue += start(run)
            case .cancel(let run): queue += signal(run, hard: false)
            case .kill(let run): queue += signal(run, hard: true)
            case .persistTrigger(let key, let realtime): history.update(key) { $0.lastTriggerUSec = realtime }
            case .persistRequest(let key, let realtime): history.update(key) { $0.requestedUSec = realtime }
            case .persistHealth(let key, let health): history.update(key) { $0.health = health }
            case .alert(let alert): journal.alert(alert)
            case .settle(let ids):
                // The history that records the answering run goes to disk first.
                saveHistory()
                store.settle(ids)
            case .report(let event):
                if !report(event) { continue }
                for observer in observers { observer.observe(event) }
            case .inhibit(let lock): component(MachineLink.self).inhibit(lock, hold: true, in: self)
            case .release(let lock): component(MachineLink.self).inhibit(lock, hold: false, in: self)
            }
        }
        saveHistory()
        for component in components { component.performed(in: self) }
        if metrics.file != nil { metrics.changed { [weak self] in self?.onLoop { $0.writeMetricsFile() } } }
        afterChange()
    }

    /// Starts the run's handler; if it cannot start, returns the scheduler's actions for its end.
    func start(_ run: Run) -> [SchedulerAction] {
        guard let failure = launch(run) else { return [] }
        return scheduler.handlerEnded(runID: run.id, termination: failure, at: clock.now())
    }

    /// Starts the run's handler, unless a component takes its start over (the fleet's claim);
    /// returns a termination if it could not start.
    private func launch(_ run: Run) -> Termination? {
        for component in components where component.takeStart(of: run, in: self) { return nil }
        return launchHandler(run)
    }

    /// Routes a report to the components, and the launchers; false when one holds it back.
    private func report(_ event: SchedulerEvent) -> Bool {
        for component in components where !component.observe(event, in: self) { return false }
        switch event {
        case .ended(let run): if run.inProcess { swift.ended(run.id) } else { commands.ended(run.id) }
        case .coalesced(let run, _) where !run.inProcess: commands.joined(run)
        default: break
        }
        return true
    }

    /// Starts the run's handler now, whatever its task's `Fleet=` says. A run of a Swift handler
    /// says so: it starts without a look at the task's definition.
    func launchHandler(_ run: Run) -> Termination? {
        let run = history.resuming(run, scheduler.tasks[run.key]?.definition, journal: journal)
        if run.inProcess { return swift.start(run, now: clock.now(), daemon: self) }
        guard case .command(let spec)? = scheduler.tasks[run.key]?.definition.handler else {
            return .spawnFailed("unknown task")
        }
        return commands.start(run, spec, reporter: self)
    }

    /// Cancellation (`hard`: the hard stop) of a run's handler.
    /// Returns the actions of its end, if it ended at once.
    private func signal(_ run: Run, hard: Bool) -> [SchedulerAction] {
        for component in components {
            if let actions = component.takeSignal(of: run, hard: hard, in: self) { return actions }
        }
        switch (run.inProcess, hard) {
        case (true, false): swift.cancel(run.id)
        case (true, true): swift.abandon(run.id)
        case (false, _): commands.signal(run.id, hard: hard)
        }
        return []
    }

    /// Hands changed records to the store; watchers hear of ends once they are on disk.
    func saveHistory() {
        history.save(watchers: watchers, journal: journal) { [weak self] runs in
            self?.onLoop { daemon in
                daemon.watchers.deliverEnded(runs)
                daemon.afterChange()
            }
        }
    }

    func writeMetricsFile() {
        if let problem = metrics.write(metrics(prometheus: true)) { journal.daemon(.stateError, 4, problem) }
    }

    func afterChange(rearm: Bool = false) {
        for component in components { component.changed(in: self) }
        armTimer(rearm: rearm)
        // The closure only when none is due yet: this runs after every batch of actions.
        if !status.pending { status.changed { [weak self] in self?.onLoop { $0.sendStatus() } } }
    }

    /// `STATUS=` now.
    func sendStatus() { status.send(status.text(scheduler, now: clock.now())) }

    // MARK: The event loop

    /// Runs `body` on the actor: at once when called from an fd handler of the event loop (a timer,
    /// a process exit), which runs on the actor's thread between its jobs; else as a job there.
    package nonisolated func onLoop(_ body: @escaping @Sendable (isolated Daemon) -> Void) {
        guard EventLoop.shared.isCurrent else {
            Task(executorPreference: EventLoop.shared) { await body(self) }
            return
        }
        isolatedOnLoop(body)
    }

    /// Runs `body` isolated to the daemon, from the event loop's thread outside a job (an fd handler,
    /// a deferred body, a call the control socket read): the daemon's executor is the loop, whose
    /// thread runs nothing else of the daemon's meanwhile. `assumeIsolated` checks it, through
    /// `EventLoop.isIsolatingCurrentContext`, and traps anywhere else.
    package nonisolated func isolatedOnLoop<T: Sendable>(_ body: (isolated Daemon) throws -> T) rethrows -> T {
        try assumeIsolated(body)
    }
}

/// The daemon is what the control service drives: its request methods are the protocol's.
extension Daemon: SchedulerControl {}

extension Daemon: RunReporter {
    package nonisolated func progressed(runID: String, _ report: ProgressMailbox.Report?) {
        onLoop { $0.progressReported(runID: runID, report) }
    }

    package nonisolated func ended(runID: String, termination: Termination, result: String?, usage: RunUsage?) {
        onLoop { $0.handlerEnded(runID: runID, termination: termination, result: result, usage: usage) }
    }
}
