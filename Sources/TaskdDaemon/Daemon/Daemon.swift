import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdFleet
import TaskdIO
import TaskdMachine
import TaskdProcess
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon: a thin interpreter between the outside world and the pure `Scheduler`. Inputs
/// (requests, handler ends, machine events, its timer) go to the scheduler; `perform` carries out
/// the actions it returns through the ports (`DaemonPorts`) and hands each event to its observers
/// (journal, metrics, history, watchers). It runs on the event loop's thread, where requests are
/// read and timers and exits are seen, so none of them waits for a thread hand-off.
package actor Daemon {
    package nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    var scheduler: Scheduler
    let clock: any DaemonClock
    let journal: EventJournal
    let store: any RunStore
    let cutRuns: CutRunsFile?
    /// The runs in progress on disk (`ActiveRunsFile`): each one's snapshot as it started, and
    /// whether the set changed since it was last handed to the file.
    let activeRuns: ActiveRunsFile?
    var activeSnapshots: [String: RunSnapshot] = [:]
    var activeChanged = false
    let loadConfig: @Sendable () -> LoadedConfig
    let commands: any CommandLauncher
    let swift: SwiftHandlerLauncher
    let history: RunHistory
    let watchers: RunWatchers
    let metrics: MetricsPublisher
    let status: ServiceStatus
    /// Who hears of every event, in order: the journal, the metrics, the history, the watchers,
    /// and whoever subscribed (`subscribe`).
    var observers: [any RunEventObserver]
    /// The machine (made at `start`, as it reports to the daemon); see `Daemon+Machine`.
    var machine: (any MachinePort)!
    /// Inhibitor locks the scheduler took or released before there was a machine (`start`).
    var locksBeforeStart: [(SleepInhibitor, Bool)] = []
    let makeMachine: @Sendable (@escaping @Sendable (MachineEvent) -> Void) -> any MachinePort
    var conditions: ConditionsInUse
    /// The fleet (made at `start`, as it reports to the daemon; nil: none), and its runs' claims;
    /// see `Daemon+Fleet`.
    let makeFleet: (@Sendable (@escaping @Sendable (FleetEvent) -> Void) -> any FleetPort)?
    var fleet: (any FleetPort)?
    var fleetRuns: [String: FleetHold] = [:]
    /// The timer of the claims asked again (`FleetUnavailable=wait`); why etcd is unreachable, if it is.
    var fleetTimer: (any DaemonTimer)?
    var fleetUnreachable: String?
    /// The deadline timer, armed for the scheduler's next deadline.
    var timer: (any DaemonTimer)?
    var timerDeadline: UInt64?
    var stopWaiters: [CheckedContinuation<Void, Never>] = []
    /// The `Drain` calls waiting for the active runs to end, and the timer of their timeouts.
    var drainCalls = DrainCalls()
    var drainTimer: (any DaemonTimer)?
    /// The `Upgrade` calls waiting for the upgrade they asked for, and whoever waits for the Swift
    /// handlers' runs to end before it (see `Daemon+Upgrade`).
    var upgradeCalls: [@Sendable (Result<SchedulerInterface.Upgrade.Reply, UpgradeFailure>) -> Void] = []
    var upgradeWaiters: [CheckedContinuation<Void, Never>] = []
    var recordRandom = SystemRandom()
    /// `AllowUsers=`/`AllowGroups=` of the configuration in effect.
    var access: AccessList?
    let owner = geteuid()
    /// Submitted tasks (`Daemon+Submit`): their files, who may submit (`SubmitUsers=`,
    /// `SubmitGroups=`), the names being written, and those whose run ended (spent, maybe).
    let submitted: SubmittedFolder
    var submitAccess: AccessList?
    var submitting: Set<String> = []
    var submittedEnded: Set<TaskKey> = []

    package init(
        config: LoadedConfig, handlers: [String: TaskHandler], records: [TaskKey: TaskRecord], ports: DaemonPorts
    ) {
        clock = ports.clock
        scheduler = Scheduler(
            definitions: config.tasks, startedAt: ports.clock.now(), random: ports.random,
            machineID: ports.machineID, persistedTriggers: records.compactMapValues(\.lastTriggerUSec),
            persistedRequests: records.compactMapValues(\.requestedUSec),
            persistedHealth: records.compactMapValues(\.knownHealth),
            maxConcurrentRuns: Self.maxConcurrentRuns(config.daemon),
            watchesSleep: config.daemon.watchSleep ?? true)
        journal = ports.journal
        store = ports.store
        cutRuns = ports.cutRuns
        activeRuns = ports.activeRuns
        loadConfig = ports.loadConfig
        commands = ports.commands
        makeMachine = ports.machine
        makeFleet = ports.fleet
        swift = SwiftHandlerLauncher(handlers: handlers)
        history = RunHistory(records: records, store: ports.store, tasks: config.tasks)
        watchers = RunWatchers(clock: ports.clock)
        metrics = MetricsPublisher(file: config.daemon.metricsFile, clock: ports.clock)
        status = ServiceStatus(notifier: ports.notifier, clock: ports.clock)
        observers = [JournalObserver(journal: ports.journal), metrics, history, watchers]
        conditions = ConditionsInUse(config.tasks)
        access = config.daemon.access
        submitAccess = config.daemon.submitAccess
        submitted = ports.submitted
        Self.checkChains(config.tasks, resolver: scheduler.resolver, journal: journal)
    }

    /// `MaxConcurrentRuns=`, or the number of online CPUs.
    static func maxConcurrentRuns(_ settings: DaemonSettings) -> Int {
        settings.maxConcurrentRuns ?? max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Replays the wakes acknowledged before a crash or stop that had not been answered, then
    /// fires what is due at start-up (`OnStartupSec=0`) and arms the timer.
    package func start(recovering wakes: [WakeRecord]) {
        // The conditions first: a replayed wake of a task that needs AC power waits for it.
        machine = makeMachine { [weak self] event in self?.onLoop { $0.machineChanged(event) } }
        fleet = makeFleet? { [weak self] event in self?.onLoop { $0.fleetEvent(event) } }
        for (lock, hold) in locksBeforeStart { inhibit(lock, hold: hold) }
        locksBeforeStart = []
        watchConditions()
        var actions: [SchedulerAction] = []
        var dropped: [String] = []
        for wake in wakes {
            let (result, more) = scheduler.wake(
                key: wake.key, wakeID: wake.wakeID, payload: wake.payload, record: wake.id,
                acknowledged: wake.acknowledgedUSec, at: clock.now())
            if result == nil { dropped.append(wake.id) }
            actions += more
        }
        if !wakes.isEmpty {
            journal.daemon(
                .wakesRecovered, 4,
                "replaying \(wakes.count - dropped.count) acknowledged wake(s) that had not finished before the daemon stopped"
                    + (dropped.isEmpty ? "" : "; \(dropped.count) of them name a task that no longer exists"),
                [("TASKD_RECOVERED_WAKES", String(wakes.count - dropped.count))])
        }
        if !dropped.isEmpty { store.settle(dropped) }
        perform(actions)
        tick()
    }

    package var taskCount: Int { scheduler.tasks.count }

    /// Adds an observer of every event from now on (after the daemon's own).
    package func subscribe(_ observer: any RunEventObserver) { observers.append(observer) }

    // MARK: Time

    /// Time passed. The handlers it starts start before the timers that fired are re-armed:
    /// searching a calendar's next elapse is the costliest part of a firing, and no start needs it.
    func tick() {
        timerDeadline = nil
        refreshSampled()
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
                // A fleet run is told to have started once its claim is won (`Daemon+Fleet`).
                if !fleetRuns.isEmpty, case .started(let run) = event, fleetRuns[run.id]?.pending == true {
                    fleetRuns[run.id]?.startEvent = event
                    continue
                }
                if case .ended(let run) = event {
                    handlerGone(run)
                    if run.key.kind == SubmittedTaskFile.kind { submittedEnded.insert(run.key) }
                    if !fleetRuns.isEmpty, fleetRuns[run.id] != nil { fleetRunEnded(run) }
                    if activeRuns != nil, activeSnapshots.removeValue(forKey: run.id) != nil { activeChanged = true }
                } else if case .started(let run) = event, activeRuns != nil {
                    activeSnapshots[run.id] = RunSnapshot(run)
                    activeChanged = true
                } else if case .coalesced(let run, _) = event {
                    // It answers one more wake now: the next taskd that takes it over must know.
                    if !run.inProcess { commands.joined(run) }
                    if activeSnapshots[run.id] != nil {
                        activeSnapshots[run.id] = RunSnapshot(run)
                        activeChanged = true
                    }
                }
                for observer in observers { observer.observe(event) }
            case .inhibit(let lock): inhibit(lock, hold: true)
            case .release(let lock): inhibit(lock, hold: false)
            }
        }
        saveHistory()
        if !submittedEnded.isEmpty { retireSpent() }
        if machine != nil { followMachine() }
        if metrics.file != nil { metrics.changed { [weak self] in self?.onLoop { $0.writeMetricsFile() } } }
        afterChange()
    }

    /// Starts the run's handler; if it cannot start, returns the scheduler's actions for its end.
    func start(_ run: Run) -> [SchedulerAction] {
        guard let failure = launch(run) else { return [] }
        return scheduler.handlerEnded(runID: run.id, termination: failure, at: clock.now())
    }

    /// Starts the run's handler; returns a termination if it could not start. A run of a Swift
    /// handler says so: it starts without a look at the task's definition.
    private func launch(_ run: Run) -> Termination? {
        if let fleet, let definition = scheduler.tasks[run.key]?.definition, Self.claims(run, definition) {
            claim(run, definition, fleet)
            return nil
        }
        return launchHandler(run)
    }

    /// Starts the run's handler now, whatever its task's `Fleet=` says.
    func launchHandler(_ run: Run) -> Termination? {
        let run = resuming(run)
        if run.inProcess { return swift.start(run, now: clock.now(), daemon: self) }
        guard case .command(let spec)? = scheduler.tasks[run.key]?.definition.handler else {
            return .spawnFailed("unknown task")
        }
        return commands.start(run, spec, reporter: self)
    }

    /// Cancellation (`hard`: the hard stop) of a run's handler.
    /// Returns the actions of its end, if it ended at once.
    private func signal(_ run: Run, hard: Bool) -> [SchedulerAction] {
        // No handler yet, its claim pending: it ends once etcd answers (`claimDecided`), or now if
        // it only waits to ask again.
        if !fleetRuns.isEmpty, fleetRuns[run.id]?.pending == true { return cancelWaitingClaim(run.id) }
        switch (run.inProcess, hard) {
        case (true, false): swift.cancel(run.id)
        case (true, true): swift.abandon(run.id)
        case (false, _): commands.signal(run.id, hard: hard)
        }
        return []
    }

    private func handlerGone(_ run: Run) {
        if run.inProcess { swift.ended(run.id) } else { commands.ended(run.id) }
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
        answerDrainCalls()
        if activeChanged, let activeRuns {
            activeChanged = false
            activeRuns.save(activeSnapshots)
        }
        if scheduler.runs.isEmpty, !stopWaiters.isEmpty {
            stopWaiters.forEach { $0.resume() }
            stopWaiters.removeAll()
        }
        if !upgradeWaiters.isEmpty, scheduler.activeInProcess == 0 {
            upgradeWaiters.forEach { $0.resume() }
            upgradeWaiters.removeAll()
        }
        armTimer(rearm: rearm)
        // The closure only when none is due yet: this runs after every batch of actions.
        if !status.pending { status.changed { [weak self] in self?.onLoop { $0.status.send($0.statusText) } } }
    }

    /// `STATUS=`: runs active and queued, and the next timer.
    var statusText: String {
        let running = scheduler.activeCount
        let waiting = scheduler.runs.count - running
        var text = running == 0 ? "Idle" : "\(running) run(s) active"
        if scheduler.isDraining { text = "Draining: " + (running == 0 ? "no run active" : text) }
        if waiting > 0 { text += ", \(waiting) queued" }
        if let (due, key) = scheduler.tasks.nextDue, !scheduler.isStopping {
            text += "; next: \(key.identifier) at \(Timestamp.format(clock.now().realtime(at: due)))"
        }
        return text
    }

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

extension Daemon: RunReporter {
    package nonisolated func progressed(runID: String, _ report: ProgressMailbox.Report?) {
        onLoop { $0.progressReported(runID: runID, report) }
    }

    package nonisolated func ended(runID: String, termination: Termination, result: String?, usage: RunUsage?) {
        onLoop { $0.handlerEnded(runID: runID, termination: termination, result: result, usage: usage) }
    }
}
