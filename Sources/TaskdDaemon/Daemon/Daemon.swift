@preconcurrency import Dispatch
import TaskRuntime
import TaskScheduling
import TaskdConfig
import TaskdIO
import TaskdProtocol
import TaskdSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon loop: an actor that feeds inputs (wakes, cancels, handler ends, reloads, its timer)
/// to the pure `Scheduler` and performs the actions it returns: start and signal handlers, journal
/// events, keep history and acknowledged wakes in the state folder, notify watchers, and re-arm
/// one timer for the scheduler's next deadline. It runs on the event loop's thread, where wake
/// requests are read and timers and exits are seen, so none of them waits for a thread hand-off;
/// Swift handlers start on that thread and resume on the global concurrent executor after a suspension.
actor Daemon {
    nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    private var scheduler: Scheduler
    private var handlers: [String: TaskHandler]
    private let journal: EventJournal
    private let notifier: ServiceNotifier
    private let stateDirectory: String
    /// Where command runs get cgroups of their own (nil: process groups).
    private let cgroups: RunCgroups?
    /// Tasks whose resource limits were reported as not applied (said once per task).
    private var limitsReported: Set<TaskKey> = []
    /// What the metrics count (wakes, runs by outcome, durations), and `MetricsFile=` with the
    /// timer that rewrites it at most every `metricsInterval` after a change.
    private var counters = MetricCounters()
    private let metricsFile: String?
    private var metricsTimer: DeadlineTimer?
    private var metricsPending = false
    private var metricsWrittenAt: UInt64 = 0
    static let metricsInterval: UInt64 = 10_000_000
    private let store: StateStore
    private let loadConfig: @Sendable () -> LoadedConfig
    private var records: [TaskKey: TaskRecord]
    /// Tasks whose record changed since it was last handed to the store.
    private var dirty: Set<TaskKey> = []
    /// Ended runs that watchers learn of once the history that records them is on disk.
    private var endedAwaitingDisk: [TaskKey: [Run]] = [:]
    private var active: [String: ActiveHandler] = [:]
    private var watches: [Int: RunWatch] = [:]
    /// Watchers' notices of signals sent to commands, held until the run ends (see `HeldNotices`).
    private var heldNotices = HeldNotices()
    /// The machine: power supplies, the system bus, free space and pressure (see `MachineWatch`).
    private var machine: MachineWatch!
    /// Every condition some task requires, and those of them that did not hold when last looked at.
    private var conditionsInUse: Set<TaskCondition> = []
    private var unheld: Set<TaskCondition> = []
    /// Whether some task requires free space or pressure (read every few seconds while a run needs it).
    private var samplesConditions = false
    /// `WatchSleep=`: hold logind's delay inhibitor and cancel runs before the system sleeps.
    private let watchSleep: Bool
    /// Whether sleep is watched yet: from the first run on (before it there is nothing to cut, and
    /// a daemon that never runs anything never maps sd-bus's code).
    private var watchingSleep = false
    /// Whether some task has `Sleep=block`, and whether its block inhibitor is asked for now.
    private var anyBlocksSleep = false
    private var blockingSleep = false
    private var nextWatchID = 0
    private var timer: Task<Void, Never>?
    /// The timerfd behind `armTimer` (made on first use); `timer` sleeps only if it cannot exist.
    private var deadlineTimer: DeadlineTimer?
    private var timerDeadline: UInt64?
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []
    private var lastStatus = ""
    private var statusPending = false
    private var recordRandom = SystemRandom()
    /// The timerfd that pets systemd's watchdog, when `WATCHDOG_USEC` asks for it.
    private var watchdog: DeadlineTimer?
    /// `AllowUsers=`/`AllowGroups=` of the configuration in effect.
    private var access: AccessList?
    private let owner = geteuid()

    init(
        config: LoadedConfig, handlers: [String: TaskHandler], journal: EventJournal, notifier: ServiceNotifier,
        stateDirectory: String, cgroups: RunCgroups? = nil, store: StateStore, records: [TaskKey: TaskRecord],
        loadConfig: @escaping @Sendable () -> LoadedConfig
    ) {
        scheduler = Scheduler(
            definitions: config.tasks, startedAt: SystemClock.now(), random: SystemRandom(),
            machineID: Self.machineID(), persistedTriggers: records.compactMapValues(\.lastTriggerUSec),
            persistedRequests: records.compactMapValues(\.requestedUSec),
            persistedHealth: records.compactMapValues(\.knownHealth),
            maxConcurrentRuns: Self.maxConcurrentRuns(config.daemon))
        watchSleep = config.daemon.watchSleep ?? true
        metricsFile = config.daemon.metricsFile
        (conditionsInUse, samplesConditions, anyBlocksSleep) = Self.needs(of: config.tasks)
        self.handlers = handlers
        defer { Self.checkChains(config.tasks, resolver: scheduler.resolver, journal: journal) }
        self.journal = journal
        self.notifier = notifier
        self.stateDirectory = stateDirectory
        self.cgroups = cgroups
        self.store = store
        self.records = records
        self.loadConfig = loadConfig
        self.access = config.daemon.access
    }

    /// /etc/machine-id, for FixedRandomDelay= (empty when it cannot be read).
    static func machineID() -> String {
        guard case .success(let bytes) = FileIO.read("/etc/machine-id") else { return "" }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    /// `MaxConcurrentRuns=`, or the number of online CPUs.
    static func maxConcurrentRuns(_ settings: DaemonSettings) -> Int {
        settings.maxConcurrentRuns ?? max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Replays the wakes acknowledged before a crash or stop that had not been answered, then
    /// fires what is due at start-up (`OnStartupSec=0`) and arms the timer.
    func start(recovering wakes: [WakeRecord]) {
        // The conditions first: a replayed wake of a task that needs AC power waits for it.
        machine = MachineWatch { [weak self] event in self?.onLoop { $0.machineChanged(event) } }
        watchConditions()
        var actions: [SchedulerAction] = []
        var dropped: [String] = []
        for wake in wakes {
            let (result, more) = scheduler.wake(
                key: wake.key, wakeID: wake.wakeID, payload: wake.payload, record: wake.id,
                acknowledged: wake.acknowledgedUSec, at: SystemClock.now())
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

    var taskCount: Int { scheduler.tasks.count }

    /// Sends `WATCHDOG=1` every `interval` µs (half of `WATCHDOG_USEC`) from a timerfd on the event
    /// loop: a wedged scheduler stops petting and systemd restarts taskd. With Swift handlers, each
    /// pet also makes a round trip through the global concurrent executor, so a cooperative pool
    /// that no longer runs (handlers blocking its threads) stops it too. Without them that pool is
    /// never used (see `TaskDaemon.run(arguments:)`).
    func startWatchdog(every interval: UInt64) {
        let throughPool = !handlers.isEmpty
        watchdog = DeadlineTimer { [weak self] in
            guard let self else { return }
            guard throughPool else { return onLoop { $0.petWatchdog(every: interval) } }
            Task(executorPreference: globalConcurrentExecutor) { await self.petWatchdog(every: interval) }
        }
        guard let watchdog else {
            // No timerfd (out of descriptors): sleep between pets instead (a Dispatch timer).
            Task { [weak self] in
                while (try? await Task.sleep(for: .microseconds(Int64(clamping: interval)))) != nil {
                    guard let self else { return }
                    await self.petWatchdog(every: interval)
                }
            }
            return
        }
        watchdog.arm(at: DeadlineTimer.now() + interval)
    }

    private func petWatchdog(every interval: UInt64) {
        notifier.notify("WATCHDOG=1")
        watchdog?.arm(at: DeadlineTimer.now() + interval)
    }

    // MARK: Access

    /// Throws `permissionDenied` unless the peer may use the socket (`AllowUsers=`, `AllowGroups=`).
    func checkAccess(_ peer: PeerCredentials) throws {
        guard AccessList.allows(access, uid: peer.uid, gid: peer.gid, groups: peer.groups, owner: owner) else {
            throw DaemonError.permissionDenied("uid \(peer.uid) may not use taskd (AllowUsers=, AllowGroups=)")
        }
    }

    /// Throws `permissionDenied` unless the peer may wake or cancel every task of `keys` (`WakeUsers=`, `WakeGroups=`).
    private func checkWake(_ peer: PeerCredentials, _ keys: [TaskKey]) throws {
        for key in keys {
            let rule = scheduler.tasks[key]?.definition.wakeAccess
            guard AccessList.allows(rule, uid: peer.uid, gid: peer.gid, groups: peer.groups, owner: owner) else {
                throw DaemonError.permissionDenied(
                    "uid \(peer.uid) may not wake or cancel \(key) (WakeUsers=, WakeGroups=)")
            }
        }
    }

    /// Throws `permissionDenied` unless the peer is root or taskd's own user.
    func checkAdmin(_ peer: PeerCredentials) throws {
        guard peer.uid == 0 || peer.uid == owner else {
            throw DaemonError.permissionDenied("only root may reload taskd")
        }
    }

    // MARK: Requests

    /// Wakes the target. `reply` gets the runs as they were once their handlers began, once the
    /// wake is in the state folder (one record per task; synced as `SyncIntervalSec=` says), so an
    /// acknowledged wake survives a crash; it is called on the state writer's thread, or on the
    /// loop's. With `watch`, every later state of those runs goes to `watch` on the loop, in order,
    /// the last one each run's end (told once the history recording it is on disk). The reply is
    /// built after the handlers begin, to not delay them.
    func wake(
        target: String, id: String?, payload: String?, peer: PeerCredentials,
        watch: (@Sendable (RunInfo) -> Void)? = nil, followRetries: Bool = true,
        reply: @escaping @Sendable ([RunInfo]) -> Void
    ) throws {
        let (results, ticket) = try acknowledge(
            target: target, id: id, payload: payload, watch: watch, followRetries: followRetries, peer: peer)
        afterHandlersStart { daemon in
            let runs = daemon.runs(results)
            daemon.store.whenDurable(ticket) { reply(runs) }
        }
    }

    /// The wake's runs as they are now (one that ended already: as it was acknowledged).
    private func runs(_ results: [WakeResult]) -> [RunInfo] {
        results.map { RunInfo(scheduler.runs[$0.run.id] ?? $0.run, disposition: $0.disposition) }
    }

    /// Records the wake, lets the scheduler decide and starts the runs; returns the decisions and
    /// the ticket for which the record is durable (`StateStore.waitDurable`).
    private func acknowledge(
        target: String, id: String?, payload: String?, watch: (@Sendable (RunInfo) -> Void)?,
        followRetries: Bool = true, peer: PeerCredentials
    ) throws -> (results: [WakeResult], ticket: UInt64) {
        guard !scheduler.isStopping else { throw DaemonError.shuttingDown }
        let keys = try scheduler.resolver.resolve(target)
        try checkWake(peer, keys)
        counters.wakes &+= 1
        refreshSampled()
        let now = SystemClock.now()
        let wakes = keys.map {
            WakeRecord(id: newRecordID(), key: $0, wakeID: id, payload: payload, acknowledgedUSec: now.realtime)
        }
        let ticket = store.add(wakes)
        var results: [WakeResult] = []
        var actions: [SchedulerAction] = []
        for wake in wakes {
            let (result, more) = scheduler.wake(
                key: wake.key, wakeID: id, payload: payload, record: wake.id, at: now)
            if let result { results.append(result) }
            actions += more
        }
        let followed = results.filter { $0.disposition != .refused }
        if let watch, !followed.isEmpty {
            nextWatchID += 1
            watches[nextWatchID] = RunWatch(
                remaining: Set(followed.map(\.run.id)), notify: watch, followRetries: followRetries)
        }
        let rest = startRuns(in: actions)
        afterHandlersStart { $0.perform(rest) }
        return (results, ticket)
    }

    /// The run as it is now: in progress, or as the history recorded its end.
    private func latest(_ run: Run, disposition: WakeDisposition) -> RunInfo {
        if let now = scheduler.runs[run.id] { return RunInfo(now, disposition: disposition) }
        if var ended = records[run.key]?.history.last(where: { $0.runId == run.id }) {
            ended.disposition = disposition
            return ended
        }
        return RunInfo(run, disposition: disposition)
    }

    private func newRecordID() -> String { HexID.make(recordRandom.next()) }

    /// Cancels a run by id, or every run, queued run and retry of the tasks the target names.
    func cancel(target: String, peer: PeerCredentials) throws -> [RunInfo] {
        try checkWake(peer, scheduler.runs[target].map { [$0.key] } ?? scheduler.resolver.resolve(target))
        let (runs, actions) = try scheduler.cancel(target: target, reason: .requested, at: SystemClock.now())
        perform(actions)
        return runs.map { run in scheduler.runs[run.id].map { RunInfo($0) } ?? latest(run, disposition: .started) }
    }

    /// Pauses every task the target names (`taskctl pause`); returns them as kind:identifier.
    func pause(target: String, until: UInt64?, note: String, peer: PeerCredentials) throws -> [String] {
        try checkWake(peer, scheduler.resolver.resolve(target))
        let (keys, actions) = try scheduler.pause(target: target, until: until, note: note, at: SystemClock.now())
        perform(actions)
        return keys.map(\.description)
    }

    /// Resumes every paused task the target names (`taskctl resume`).
    func resume(target: String, peer: PeerCredentials) throws -> [String] {
        try checkWake(peer, scheduler.resolver.resolve(target))
        let (keys, actions) = try scheduler.resume(target: target, at: SystemClock.now())
        perform(actions)
        return keys.map(\.description)
    }

    /// What decides, now, whether the task runs (`taskctl why`), each reason with the MESSAGE_ID
    /// of the journal entries behind it.
    func why(name: String) throws -> (TaskKey, [(WhyReason, MessageID?)]) {
        let key = try scheduler.resolver.resolveOne(name)
        return (key, scheduler.explain(key, at: SystemClock.now()).map { ($0, MessageID.behind($0.code)) })
    }

    /// The metrics, in the OpenMetrics text format (or the Prometheus one, for `MetricsFile=`).
    func metrics(prometheus: Bool = false) -> [UInt8] {
        MetricsReport.render(scheduler, counters: counters, now: SystemClock.now(), prometheus: prometheus)
    }

    /// `MetricsFile=`: rewritten (a temporary file renamed over it, so a reader never sees half)
    /// once a change happened, at most every `metricsInterval`.
    private func metricsChanged() {
        guard metricsFile != nil, !metricsPending else { return }
        metricsPending = true
        if metricsTimer == nil {
            metricsTimer = DeadlineTimer { [weak self] in self?.onLoop { $0.writeMetrics() } }
        }
        metricsTimer?.arm(at: max(DeadlineTimer.now(), metricsWrittenAt &+ Self.metricsInterval))
    }

    private func writeMetrics() {
        guard let path = metricsFile else { return }
        metricsPending = false
        metricsWrittenAt = DeadlineTimer.now()
        if let error = FileIO.replace(path, with: metrics(prometheus: true), sync: false) {
            journal.daemon(.stateError, 4, "cannot write MetricsFile=\(path): \(error)")
        }
    }

    func list() -> [TaskInfo] {
        let now = SystemClock.now()
        return scheduler.tasks.keys.sorted().map { info(for: $0, now: now) }
    }

    func status(name: String) throws -> TaskInfo {
        let key = try scheduler.resolver.resolveOne(name)
        return info(for: key, now: SystemClock.now())
    }

    /// The task's last `limit` runs, newest first.
    func history(name: String, limit: Int) throws -> [RunInfo] {
        let key = try scheduler.resolver.resolveOne(name)
        return Array((records[key]?.history ?? []).suffix(limit).reversed())
    }

    private func info(for key: TaskKey, now: ClockReading) -> TaskInfo {
        let state = scheduler.tasks[key]!
        let record = records[key] ?? TaskRecord()
        return TaskInfo(
            state, current: state.currentRunID.flatMap { scheduler.runs[$0] },
            queued: state.queue.compactMap { scheduler.runs[$0] }, recent: Array(record.history.suffix(5).reversed()),
            last: record.lastResult, health: scheduler.health(of: key), now: now)
    }

    // MARK: Reload

    /// Loads the configuration again (off the cooperative pool). An invalid one changes nothing
    /// and its errors come back as file:line lines; a valid one is applied (see `Scheduler.reload`).
    func reload() async -> Result<ReloadDiff, ReloadFailure> {
        notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(SystemClock.now().monotonic)\nSTATUS=Reloading configuration")
        defer {
            lastStatus = ""
            notifier.notify("READY=1")
            updateStatus()
        }
        let load = loadConfig
        let config = await Thread.run { load() }
        for d in config.diagnostics {
            journal.daemon(
                .configError, d.severity == .error ? 3 : 4, d.description,
                [("CONFIG_FILE", d.location.file), ("CONFIG_LINE", String(d.location.line))])
        }
        guard config.isValid else {
            let errors = config.diagnostics.filter { $0.severity == .error }.map(\.description)
            journal.daemon(
                .reloaded, 3,
                "reload refused: the configuration has \(errors.count) error(s); the running configuration stays")
            return .failure(ReloadFailure(errors: errors))
        }
        for d in config.tasks where d.handler == .swift && handlers[d.key.identifier] == nil {
            journal.daemon(.configError, 4, "\(d.key): no Swift handler is registered; its runs will fail")
        }
        access = config.daemon.access
        (conditionsInUse, samplesConditions, anyBlocksSleep) = Self.needs(of: config.tasks)
        watchConditions()
        defer { Self.checkChains(config.tasks, resolver: scheduler.resolver, journal: journal) }
        let (diff, actions) = scheduler.reload(
            config.tasks, maxConcurrentRuns: Self.maxConcurrentRuns(config.daemon), at: SystemClock.now())
        if !diff.added.isEmpty {
            let (loaded, problems) = await store.loadTasks(diff.added)
            for problem in problems { journal.daemon(.stateError, 4, problem) }
            for (key, record) in loaded where records[key] == nil { records[key] = record }
        }
        perform(actions)
        func names(_ keys: [TaskKey]) -> String {
            keys.isEmpty ? "none" : keys.map(\.description).joined(separator: ", ")
        }
        journal.daemon(
            .reloaded, 5,
            diff.isEmpty
                ? "configuration reloaded: no task changed"
                : "configuration reloaded: added \(names(diff.added)); removed \(names(diff.removed)); changed \(names(diff.changed))",
            [
                ("TASKD_ADDED", diff.added.map(\.description).joined(separator: " ")),
                ("TASKD_REMOVED", diff.removed.map(\.description).joined(separator: " ")),
                ("TASKD_CHANGED", diff.changed.map(\.description).joined(separator: " ")),
            ])
        return .success(diff)
    }

    // MARK: Shutdown

    /// Cancels every run (reason `shutdown`) and returns once none is left: each ends by itself,
    /// or by the hard stop `CancelGraceSec` later. Their acknowledged wakes run after the restart.
    func shutdown() async {
        let actions = scheduler.shutdown(at: SystemClock.now())
        let grace = scheduler.runs.values.map(\.cancelGrace.microseconds).max() ?? 0
        let count = scheduler.runs.values.filter(\.isActive).count
        notifier.notify("STOPPING=1\nSTATUS=Stopping: cancelling \(count) run(s)")
        if grace > 0 { notifier.notify("EXTEND_TIMEOUT_USEC=\(grace + 5_000_000)") }
        journal.daemon(.daemonStopping, 5, "stopping: cancelling \(count) run(s)")
        perform(actions)
        if !scheduler.runs.isEmpty { await withCheckedContinuation { drainWaiters.append($0) } }
        await store.waitDurable(store.add([]))
    }

    // MARK: Handler ends and time

    func handlerEnded(runID: String, termination: Termination, result: String? = nil, usage: RunUsage? = nil) {
        guard scheduler.runs[runID] != nil else {
            // An abandoned Swift task finished after all: fenced, never recorded as the task's result;
            // a retry that waits for it may start now.
            journal.daemon(
                .lateResult, 5, "run \(runID.prefix(8)) returned after it was abandoned; result ignored",
                [("TASK_RUN_ID", runID)])
            perform(scheduler.handlerEnded(runID: runID, termination: termination, at: SystemClock.now()))
            return
        }
        perform(
            scheduler.handlerEnded(
                runID: runID, termination: termination, result: result, usage: usage, at: SystemClock.now()))
    }

    /// The wall clock was set or the local time zone changed: re-arm calendar timers and journal it.
    /// A Swift handler's latest progress report (`ProgressMailbox`), or a command's
    /// `PROGRESS=`/`STATUS=` line.
    func progressReported(runID: String, _ report: ProgressMailbox.Report?) {
        guard let report else { return }
        perform(
            scheduler.progress(
                runID: runID, completed: report.completed, total: report.total, status: report.status,
                at: SystemClock.now()))
    }

    /// Watches what the tasks' conditions need (the power supplies, the system bus), and gives the
    /// scheduler what does not hold now. Without any, every condition holds.
    private func watchConditions() {
        machine.watch(for: conditionsInUse)
        guard !conditionsInUse.isEmpty else {
            // A reload removed the last condition: nothing waits for one any more.
            if !unheld.isEmpty {
                unheld = []
                perform(scheduler.conditionsChanged(unheld: [], at: SystemClock.now()))
            }
            return
        }
        var source = ""
        if let power = machine.power {
            source =
                " (power supplies in \(power.folder)" + (power.isWatching ? ")" : "; no events from them, read once)")
        }
        applyConditions(always: true, source: source)
    }

    /// Reads what holds now and, when it differs from what the scheduler knows (or `always`, as
    /// when the conditions in use changed), journals it and tells the scheduler.
    private func applyConditions(always: Bool = false, source: String = "") {
        guard !conditionsInUse.isEmpty else { return }
        let now = machine.unheld(conditionsInUse)
        guard always || now != unheld else { return }
        unheld = now
        journal.daemon(
            .conditionsChanged, 6, "conditions: \(machine.summary)\(source)" + Self.unmet(unheld), conditionFields)
        perform(scheduler.conditionsChanged(unheld: unheld, at: SystemClock.now()))
    }

    /// `OnSuccess=`, `OnFailure=` and `OnOverdue=` name tasks: one that names none is said at load.
    /// Only tasks with such keys are looked at: a list of every task made after start-up's
    /// `malloc_trim` would stay resident as free heap (0.6 MiB at 10,000 tasks).
    private static func checkChains(_ tasks: [TaskDefinition], resolver: TargetResolver, journal: EventJournal) {
        for d in tasks where !(d.onSuccess.isEmpty && d.onFailure.isEmpty && d.onOverdue.isEmpty) {
            for (name, targets) in [("OnSuccess", d.onSuccess), ("OnFailure", d.onFailure), ("OnOverdue", d.onOverdue)]
            {
                for target in targets where (try? resolver.resolve(target)) == nil {
                    journal.daemon(.configError, 4, "\(d.key): \(name)=\(target) names no task; it is skipped")
                }
            }
        }
    }

    /// Free space and pressure, read afresh before a trigger is decided when no run has them
    /// sampled: a reading from the last change could be hours old.
    private func refreshSampled() {
        if samplesConditions, !machine.isSampling { applyConditions() }
    }

    /// What the tasks need watched: every condition they require, whether one is sampled (free
    /// space, pressure), and whether one has `Sleep=block`.
    private static func needs(of tasks: [TaskDefinition]) -> (Set<TaskCondition>, Bool, Bool) {
        let conditions = tasks.reduce(into: Set<TaskCondition>()) { $0.formUnion($1.conditions) }
        return (conditions, conditions.contains { $0.isSampled }, tasks.contains { $0.sleep == .block })
    }

    /// The machine changed: conditions may hold or not now, or the system sleeps or woke up.
    func machineChanged(_ event: MachineWatch.Event) {
        switch event {
        case .conditions:
            applyConditions()
        case .prepareForSleep:
            guard watchSleep else { return }
            let maxDelay = machine.bus?.state.inhibitDelayMax ?? 5_000_000
            let actions = scheduler.prepareForSleep(maxDelay: maxDelay, at: SystemClock.now())
            let cancelled = actions.filter { if case .cancel = $0 { true } else { false } }.count
            journal.daemon(
                .systemSleeps, 5,
                "the system is about to sleep: cancelling \(cancelled) run(s) within \(TimeSpan(microseconds: maxDelay))",
                [("TASKD_SLEEP_CANCELLED_RUNS", String(cancelled))])
            perform(actions)
        case .resumed:
            guard scheduler.isSleeping else { return }
            let cut = scheduler.cutBySleepCount
            journal.daemon(
                .systemResumed, 5,
                "the system resumed: catching up timers"
                    + (cut == 0 ? "" : "; running again \(cut) run(s) sleep cut short"))
            machine.bus?.takeDelayInhibitor()
            perform(scheduler.resumed(at: SystemClock.now()))
            afterChange(rearm: true)
        }
    }

    private var conditionFields: [(key: String, value: String)] {
        [
            (
                "TASKD_CONDITIONS",
                conditionsInUse.subtracting(unheld).sorted().map(\.description).joined(separator: " ")
            ),
            ("TASKD_CONDITIONS_UNMET", unheld.sorted().map(\.description).joined(separator: " ")),
        ]
    }

    private static func unmet(_ unheld: Set<TaskCondition>) -> String {
        unheld.isEmpty ? "" : "; not met: " + unheld.sorted().map(\.waitingText).joined(separator: ", ")
    }

    /// After actions: sleep is watched from the first run on; the sleep inhibitors follow the runs
    /// (the delay one goes once every run sleep waits for has ended; a block one is held while a
    /// `Sleep=block` run is active); free space and pressure are sampled while a run needs them.
    private func followMachine() {
        if watchSleep, !watchingSleep, !scheduler.runs.isEmpty {
            watchingSleep = true
            if machine.openBus() { machine.bus?.takeDelayInhibitor() }
        }
        if scheduler.isSleeping, machine.bus?.state.holdsDelayInhibitor == true, scheduler.runsDelayingSleep == 0 {
            machine.bus?.releaseDelayInhibitor()
            journal.daemon(.systemSleeps, 6, "every run is stopped: the system may sleep")
        }
        if anyBlocksSleep, scheduler.runsBlockSleep != blockingSleep {
            blockingSleep.toggle()
            machine.bus?.blockSleep(blockingSleep, why: "a taskd run with Sleep=block is in progress")
        }
        if samplesConditions {
            machine.sample(
                scheduler.runs.values.contains { run in
                    scheduler.tasks[run.key]?.definition.conditions.contains { $0.isSampled } ?? false
                })
        }
    }

    /// A handler asked for its task's next run `delay` from now (`TaskContext.scheduleNext(after:)`).
    func requestRun(_ key: TaskKey, after delay: Duration) {
        let micros = TaskHandler.microseconds(delay)
        let now = SystemClock.now()
        journal.daemon(
            .runRequested, 6,
            "\(key.identifier): its handler asked for the next run in \(TimeSpan(microseconds: micros))",
            [
                ("TASK", key.identifier), ("TASK_KIND", key.kind),
                ("TASK_REQUESTED_USEC", String(now.realtime &+ micros)),
            ])
        perform(scheduler.requestRun(key, after: micros, at: now))
    }

    func clockChanged(zone: Bool = false) {
        if zone { TimeZoneContext.localZoneChanged() }
        let now = SystemClock.now()
        let tasks = scheduler.clockChanged(at: now)
        let what = zone ? "local time zone changed" : "wall clock changed"
        journal.daemon(
            .clockChanged, 5,
            "\(what) (now \(Timestamp.format(now.realtime))); re-armed calendar timers"
                + (tasks.isEmpty ? "" : " of " + tasks.joined(separator: ", ")))
        afterChange(rearm: true)
    }

    /// Time passed. The handlers it starts start before the timers that fired are re-armed:
    /// searching a calendar's next elapse is the costliest part of a firing, and no start needs it.
    private func tick() {
        timerDeadline = nil
        refreshSampled()
        let now = SystemClock.now()
        if !heldNotices.isEmpty { heldNotices.releaseDue(at: now.monotonic).forEach(notifyWatches) }
        let rest = startRuns(in: scheduler.fire(at: now))
        afterHandlersStart { daemon in
            daemon.scheduler.rearmFired(at: now)
            daemon.perform(rest)
        }
    }

    /// Starts the runs among `actions`; returns the other actions and the ends of runs that could
    /// not start, for `afterHandlersStart`.
    private func startRuns(in actions: [SchedulerAction]) -> [SchedulerAction] {
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
    private func afterHandlersStart(_ body: @escaping @Sendable (isolated Daemon) -> Void) {
        EventLoop.shared.afterHandlerJobs { [self] in isolatedOnLoop(body) }
    }

    // MARK: Performing actions

    private func perform(_ actions: [SchedulerAction]) {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .start(let run):
                queue += start(run)
            case .cancel(let run):
                switch active[run.id] {
                case .command(let process, let killSignal)?: process.signalGroup(killSignal)
                case .swift(let task)?: Self.cancel(task)
                case nil: break
                }
            case .kill(let run):
                switch active[run.id] {
                case .command(let process, _)?: process.signalGroup(SIGKILL)
                case .swift?:
                    // Abandoned: it was cancelled at `.cancel` (a second cancel would wait on the
                    // first, and take another thread, while the handler's onCancel runs).
                    active[run.id] = nil
                case nil: break
                }
            case .persistTrigger(let key, let realtime):
                records[key, default: TaskRecord()].lastTriggerUSec = realtime
                dirty.insert(key)
            case .persistRequest(let key, let realtime):
                records[key, default: TaskRecord()].requestedUSec = realtime
                dirty.insert(key)
            case .persistHealth(let key, let health):
                records[key, default: TaskRecord()].health = health
                dirty.insert(key)
            case .alert(let alert):
                journal.alert(alert)
            case .settle(let ids):
                // The history that records the answering run goes to disk first.
                saveDirty()
                store.settle(ids)
            case .report(let event):
                journal.report(event)
                if case .ended(let run) = event {
                    counters.ended(run)
                    if !heldNotices.isEmpty { heldNotices.release(run: run.id).forEach(notifyWatches) }
                    active[run.id] = nil
                    let keep = scheduler.tasks[run.key]?.definition.historySize ?? 20
                    records[run.key, default: TaskRecord()].append(RunInfo(run), keep: keep)
                    dirty.insert(run.key)
                    endedAwaitingDisk[run.key, default: []].append(run)
                } else if holdsNotice(of: event) {
                    heldNotices.hold(event, at: SystemClock.now().monotonic)
                } else {
                    notifyWatches(event)
                }
            }
        }
        saveDirty()
        if machine != nil { followMachine() }
        if metricsFile != nil { metricsChanged() }
        afterChange()
    }

    /// Hands every changed task record to the store; watchers of runs that ended hear of it once
    /// the record is on disk and every journal entry of the run (its output, its end) has been
    /// handed to journald, so `wake --wait && journalctl` finds them (docs/journal.md).
    private func saveDirty() {
        for key in dirty.sorted() {
            let ended = endedAwaitingDisk.removeValue(forKey: key) ?? []
            let watched = ended.filter { run in watches.values.contains { $0.follows(run) } }
            let record = records[key] ?? TaskRecord()
            guard !watched.isEmpty else {
                // No one is told of these ends: write them, but spare the fsync.
                store.save(key, record, sync: false)
                continue
            }
            let journal = self.journal
            store.save(key, record) { [weak self] in
                journal.whenHandedOn { [weak self] in self?.onLoop { $0.deliverEnded(watched) } }
            }
        }
        dirty.removeAll()
        endedAwaitingDisk.removeAll()
    }

    private func deliverEnded(_ runs: [Run]) {
        for run in runs { notifyWatches(.ended(run)) }
        afterChange()
    }

    /// Starts the run's handler; if it cannot start, returns the scheduler's actions for its end.
    private func start(_ run: Run) -> [SchedulerAction] {
        guard let failure = startHandler(run) else { return [] }
        return scheduler.handlerEnded(runID: run.id, termination: failure, at: SystemClock.now())
    }

    /// Starts the run's handler; returns a termination if it could not start.
    private func startHandler(_ run: Run) -> Termination? {
        // A run of a Swift handler says so: it starts without a look at the task's definition.
        if run.inProcess { return startSwiftHandler(run) }
        guard case .command(let spec)? = scheduler.tasks[run.key]?.definition.handler else {
            return .spawnFailed("unknown task")
        }
        let journal = self.journal
        var cgroup: RunCgroup?
        do {
            cgroup = try makeCgroup(run, limits: spec.limits)
            let process = try CommandProcess.spawn(
                argv: spec.argv,
                environment: HandlerEnvironment.build(run: run, spec: spec, stateDirectory: stateDirectory),
                workingDirectory: spec.workingDirectory, stdin: run.payload,
                identity: spec.identity, outputLimit: spec.outputLimit, cgroup: cgroup,
                onOutput: { [weak self] output in
                    guard case .notification(let line) = output else {
                        return journal.output(output, run: run, limit: spec.outputLimit)
                    }
                    guard let report = NotifyLine.parse(line[...]) else { return }
                    self?.onLoop { $0.progressReported(runID: run.id, report) }
                },
                onExit: { [weak self] termination, usage in
                    self?.onLoop { $0.handlerEnded(runID: run.id, termination: termination, usage: usage) }
                })
            active[run.id] = .command(process, killSignal: spec.killSignal)
            return nil
        } catch {
            cgroup?.remove()
            return .spawnFailed(error.message)
        }
    }

    /// The run's cgroup, if runs get one; resource limits that cannot apply (no run cgroups, or
    /// a controller systemd did not give) are journaled once per task.
    private func makeCgroup(_ run: Run, limits: ResourceLimits) throws(SpawnError) -> RunCgroup? {
        var unapplied: [String] = []
        let cgroup = try cgroups?.make(runID: run.id, limits: limits, unapplied: &unapplied)
        if cgroup == nil && !limits.isEmpty { unapplied = limits.files.map { "\($0.file)=\($0.value)" } }
        if !unapplied.isEmpty, limitsReported.insert(run.key).inserted {
            journal.daemon(
                .configError, 4,
                "\(run.key): resource limits not applied (\(unapplied.joined(separator: ", "))): "
                    + (cgroups == nil ? "command runs have no cgroup of their own" : "the controller is not delegated"))
        }
        return cgroup
    }

    /// Starts a Swift handler on `HandlerExecutor`; fails if none is registered for the task.
    private func startSwiftHandler(_ run: Run) -> Termination? {
        guard let handler = handlers[run.key.identifier] else {
            return .spawnFailed("no Swift handler is registered for \(run.key)")
        }
        let now = SystemClock.now()
        // The handler is user code: its first slice runs on the loop's thread once the event or
        // job that started it returns (the loop handed on if it lasts), the rest on the pool.
        let controls = SwiftRunControls(daemon: self, run: run)
        let task = Task(executorPreference: HandlerExecutor.shared) { [weak self] in
            let (termination, result) = await handler.outcome(of: run, now: now, controls: controls)
            // Posted, not awaited: an await would hop back to this executor only to end the task
            // (one more handler job on the loop, with its stall timer armed and disarmed).
            self?.onLoop { [result] in $0.handlerEnded(runID: run.id, termination: termination, result: result) }
        }
        active[run.id] = .swift(task)
        return nil
    }

    /// Cancels Swift handlers when the loop cannot: an overcommitting concurrent queue, whose threads
    /// are outside the cooperative pool and added when one is blocked.
    private static let cancelling = DispatchQueue(label: "taskd.cancel", attributes: .concurrent)

    /// Cancels a Swift handler. Cancelling runs the handler's `onCancel` code on the cancelling
    /// thread, and while it runs the handler's task waits for it too (the runtime's cancellation
    /// lock). So it runs as user code on the loop's thread (`EventLoop.runUserCode`: no other thread
    /// woken, the loop handed on if it lasts), or, when a thread is stuck in user code already, on
    /// `cancelling`: a slow `onCancel` holds up neither the event loop nor a thread of the
    /// two-thread cooperative pool.
    private static func cancel(_ task: Task<Void, Never>) {
        EventLoop.shared.runUserCode({ task.cancel() }, elsewhere: { body in cancelling.async(execute: body) })
    }

    /// Runs `body` on the actor: at once when called from an fd handler of the event loop (a timer,
    /// a process exit), which runs on the actor's thread between its jobs; else as a job there.
    nonisolated func onLoop(_ body: @escaping @Sendable (isolated Daemon) -> Void) {
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
    nonisolated func isolatedOnLoop<T: Sendable>(_ body: (isolated Daemon) throws -> T) rethrows -> T {
        try assumeIsolated(body)
    }

    /// Whether watchers hear of `event` only once its run ends (or `HeldNotices.delay` later): it
    /// tells of a signal sent to a command's group, and someone watches the run.
    private func holdsNotice(of event: SchedulerEvent) -> Bool {
        switch event {
        case .cancelling(let run), .killing(let run):
            guard case .command? = active[run.id] else { return false }
            return watches.values.contains { $0.remaining.contains(run.id) }
        default:
            return false
        }
    }

    private func notifyWatches(_ event: SchedulerEvent) {
        for id in watches.keys {
            guard let info = watches[id]!.take(event) else { continue }
            watches[id]!.notify(info)
            if watches[id]!.isDone { watches[id] = nil }
        }
    }

    private func afterChange(rearm: Bool = false) {
        if rearm { timerDeadline = nil }
        if scheduler.runs.isEmpty, !drainWaiters.isEmpty {
            drainWaiters.forEach { $0.resume() }
            drainWaiters.removeAll()
        }
        if rearm { timer?.cancel() }
        armTimer()
        statusAfterTurn()
    }

    /// Arms the deadline timer for the scheduler's next deadline, or the next held notice's if that
    /// comes first. A timerfd armed earlier than that is left alone: it fires once early, `tick`
    /// finds nothing due and arms it then. A run that ends before its budget (most do) so costs no
    /// system call, where disarming cost one per run.
    private func armTimer() {
        var next = scheduler.nextDeadline
        if let due = heldNotices.nextDue { next = min(next ?? due, due) }
        guard next != timerDeadline else { return }
        if deadlineTimer != nil, let armed = timerDeadline, next.map({ $0 > armed }) ?? true { return }
        timer?.cancel()
        timerDeadline = next
        if deadlineTimer == nil {
            deadlineTimer = DeadlineTimer { [weak self] in
                self?.onLoop { $0.tick() }
            }
        }
        if let deadlineTimer {
            deadlineTimer.arm(at: next)
            return
        }
        guard let next else {
            timer = nil
            return
        }
        let now = SystemClock.now().monotonic
        let delay = next > now ? next - now : 0
        timer = Task { [weak self] in
            if delay > 0 {
                do { try await Task.sleep(for: .microseconds(Int64(clamping: delay))) } catch { return }
            }
            await self?.tick()
        }
    }

    /// Updates `STATUS=` once the loop's turn is over: a burst of changes sends one notification,
    /// after the handlers the turn started.
    private func statusAfterTurn() {
        guard !statusPending else { return }
        statusPending = true
        EventLoop.shared.afterTurn { [weak self] in
            self?.onLoop {
                $0.statusPending = false
                $0.updateStatus()
            }
        }
    }

    private func updateStatus() {
        let running = scheduler.activeCount
        let waiting = scheduler.runs.count - running
        var text = running == 0 ? "Idle" : "\(running) run(s) active"
        if waiting > 0 { text += ", \(waiting) queued" }
        if let (due, key) = scheduler.tasks.nextDue, !scheduler.isStopping {
            text += "; next: \(key.identifier) at \(Timestamp.format(SystemClock.now().realtime(at: due)))"
        }
        guard text != lastStatus else { return }
        lastStatus = text
        notifier.notify("STATUS=\(text)")
    }
}
