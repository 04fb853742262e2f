import TaskRuntime
import TaskScheduling
import TaskdIO
import TaskdProtocol
import TaskdSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon loop: an actor that feeds inputs (wakes, cancels, handler ends, its timer) to the
/// pure `Scheduler` and performs the actions it returns: start and signal handlers, journal
/// events, notify watchers, and re-arm one timer for the scheduler's next deadline.
actor Daemon {
    private var scheduler: Scheduler
    private let handlers: [TaskKey: TaskHandler]
    private let journal: EventJournal
    private let notifier: ServiceNotifier
    private let stateDirectory: String
    private var active: [String: ActiveHandler] = [:]
    private var watches: [Int: RunWatch] = [:]
    private var nextWatchID = 0
    private var timer: Task<Void, Never>?
    private var timerDeadline: UInt64?
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []
    private var lastStatus = ""
    private let triggerStore: TriggerStore

    init(
        definitions: [TaskDefinition], handlers: [TaskKey: TaskHandler], journal: EventJournal,
        notifier: ServiceNotifier, stateDirectory: String, persistedTriggers: [TaskKey: UInt64] = [:]
    ) {
        scheduler = Scheduler(
            definitions: definitions, startedAt: SystemClock.now(), machineID: Self.machineID(),
            persistedTriggers: persistedTriggers)
        triggerStore = TriggerStore(stateDirectory: stateDirectory)
        self.handlers = handlers
        self.journal = journal
        self.notifier = notifier
        self.stateDirectory = stateDirectory
    }

    /// /etc/machine-id, for FixedRandomDelay= (empty when it cannot be read).
    static func machineID() -> String {
        guard case .success(let bytes) = FileIO.read("/etc/machine-id") else { return "" }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    /// Fires what is due at start-up (`OnStartupSec=0`) and arms the timer.
    func start() { tick() }

    var taskCount: Int { scheduler.tasks.count }

    // MARK: Requests

    /// Wakes the target; with `watch`, also returns a stream of every later state of those runs.
    func wake(target: String, id: String?, payload: String?, watch: Bool) throws -> (
        runs: [RunInfo], updates: AsyncStream<RunInfo>?
    ) {
        guard !scheduler.isStopping else { throw DaemonError.shuttingDown }
        let (results, actions) = try scheduler.wake(target: target, wakeID: id, payload: payload, at: SystemClock.now())
        var updates: AsyncStream<RunInfo>?
        if watch {
            let (stream, continuation) = AsyncStream.makeStream(of: RunInfo.self)
            nextWatchID += 1
            watches[nextWatchID] = RunWatch(remaining: Set(results.map(\.run.id)), continuation: continuation)
            updates = stream
        }
        perform(actions)
        // A run that ended while starting (spawn failure) is reported in its final state.
        let runs = results.map { r in
            RunInfo(
                scheduler.tasks[r.run.key]?.lastRun?.id == r.run.id ? scheduler.tasks[r.run.key]!.lastRun! : r.run,
                coalesced: r.coalesced)
        }
        return (runs, updates)
    }

    func cancel(target: String) throws -> [RunInfo] {
        let (runs, actions) = try scheduler.cancel(target: target, reason: .requested, at: SystemClock.now())
        perform(actions)
        return runs.map { RunInfo(scheduler.runs[$0.id] ?? $0) }
    }

    func list() -> [TaskInfo] {
        let now = SystemClock.now()
        return scheduler.tasks.keys.sorted().map { info(for: $0, now: now) }
    }

    func status(name: String) throws -> TaskInfo {
        let key = try scheduler.resolver.resolveOne(name)
        return info(for: key, now: SystemClock.now())
    }

    private func info(for key: TaskKey, now: ClockReading) -> TaskInfo {
        let state = scheduler.tasks[key]!
        return TaskInfo(state, current: state.currentRunID.flatMap { scheduler.runs[$0] }, now: now)
    }

    /// Cancels every run (reason `shutdown`) and returns once none is left: each ends by itself,
    /// or by the hard stop `CancelGraceSec` later.
    func shutdown() async {
        let actions = scheduler.shutdown(at: SystemClock.now())
        let grace =
            scheduler.runs.values.compactMap { scheduler.tasks[$0.key]?.definition.cancelGrace.microseconds }.max() ?? 0
        notifier.notify("STOPPING=1\nSTATUS=Stopping: cancelling \(scheduler.runs.count) run(s)")
        if grace > 0 { notifier.notify("EXTEND_TIMEOUT_USEC=\(grace + 5_000_000)") }
        journal.daemon(.daemonStopping, 5, "taskd stopping: cancelling \(scheduler.runs.count) run(s)")
        perform(actions)
        if scheduler.runs.isEmpty { return }
        await withCheckedContinuation { drainWaiters.append($0) }
    }

    // MARK: Handler ends and time

    func handlerEnded(runID: String, termination: Termination) {
        guard scheduler.runs[runID] != nil else {
            // An abandoned Swift task finished after all: fenced, never recorded as the task's result.
            journal.daemon(
                .lateResult, 5, "run \(runID.prefix(8)) returned after it was abandoned; result ignored",
                [("TASK_RUN_ID", runID)])
            return
        }
        perform(scheduler.handlerEnded(runID: runID, termination: termination, at: SystemClock.now()))
    }

    /// The wall clock was set or the local time zone changed: re-arm calendar timers and journal it.
    func clockChanged(zone: Bool = false) {
        let now = SystemClock.now()
        let tasks = scheduler.clockChanged(at: now)
        let what = zone ? "local time zone changed" : "wall clock changed"
        journal.daemon(
            .clockChanged, 5,
            "\(what) (now \(Timestamp.format(now.realtime))); re-armed calendar timers"
                + (tasks.isEmpty ? "" : " of " + tasks.joined(separator: ", ")))
        afterChange(rearm: true)
    }

    private func tick() {
        timerDeadline = nil
        perform(scheduler.advance(to: SystemClock.now()))
    }

    // MARK: Performing actions

    private func perform(_ actions: [SchedulerAction]) {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .start(let run):
                if let failure = startHandler(run) {
                    queue += scheduler.handlerEnded(runID: run.id, termination: failure, at: SystemClock.now())
                }
            case .cancel(let run):
                switch active[run.id] {
                case .command(let process, let killSignal)?: process.signalGroup(killSignal)
                case .swift(let task)?: task.cancel()
                case nil: break
                }
            case .kill(let run):
                switch active[run.id] {
                case .command(let process, _)?: process.signalGroup(SIGKILL)
                case .swift(let task)?:
                    task.cancel()
                    active[run.id] = nil
                case nil: break
                }
            case .persistTrigger(let key, let realtime):
                let journal = self.journal
                triggerStore.save(key, realtime) { message in
                    journal.daemon(.configError, 3, "cannot keep the last trigger of \(key): \(message)")
                }
            case .report(let event):
                journal.report(event)
                notifyWatches(event)
                if case .ended(let run) = event { active[run.id] = nil }
            }
        }
        afterChange()
    }

    /// Starts the run's handler; returns a termination if it could not start.
    private func startHandler(_ run: Run) -> Termination? {
        guard let definition = scheduler.tasks[run.key]?.definition else { return .spawnFailed("unknown task") }
        switch definition.handler {
        case .command(let spec):
            let journal = self.journal
            do {
                let process = try CommandProcess.spawn(
                    argv: spec.argv,
                    environment: HandlerEnvironment.build(run: run, spec: spec, stateDirectory: stateDirectory),
                    workingDirectory: spec.workingDirectory, stdin: run.payload,
                    onOutput: { line in journal.output((line.stream.rawValue, line.priority, line.text), run: run) },
                    onExit: { [weak self] termination in
                        Task { await self?.handlerEnded(runID: run.id, termination: termination) }
                    })
                active[run.id] = .command(process, killSignal: spec.killSignal)
                return nil
            } catch {
                return .spawnFailed(error.message)
            }
        case .swift:
            guard let handler = handlers[run.key] else {
                return .spawnFailed("no Swift handler is registered for \(run.key)")
            }
            let context = TaskContext(run: run, now: SystemClock.now())
            let task = Task { [weak self] in
                let termination: Termination
                do {
                    try await handler(context)
                    termination = .returned
                } catch {
                    termination = .threw(String(describing: error))
                }
                await self?.handlerEnded(runID: context.runID, termination: termination)
            }
            active[run.id] = .swift(task)
            return nil
        }
    }

    private func notifyWatches(_ event: SchedulerEvent) {
        let run = event.run
        for (id, watch) in watches where watch.remaining.contains(run.id) {
            watch.continuation.yield(RunInfo(run))
            if case .ended = event {
                watches[id]!.remaining.remove(run.id)
                if watches[id]!.remaining.isEmpty {
                    watch.continuation.finish()
                    watches[id] = nil
                }
            }
        }
    }

    private func afterChange(rearm: Bool = false) {
        if rearm { timerDeadline = nil }
        if scheduler.runs.isEmpty, !drainWaiters.isEmpty {
            drainWaiters.forEach { $0.resume() }
            drainWaiters.removeAll()
        }
        for (id, watch) in watches where watch.remaining.isEmpty {
            watch.continuation.finish()
            watches[id] = nil
        }
        if rearm { timer?.cancel() }
        armTimer()
        updateStatus()
    }

    private func armTimer() {
        let next = scheduler.nextDeadline
        guard next != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = next
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

    private func updateStatus() {
        let running = scheduler.runs.count
        var text = running == 0 ? "Idle" : "\(running) run(s) active"
        let next = scheduler.tasks.values.compactMap { s in s.nextElapse.map { ($0, s.definition.key.identifier) } }.min
        { $0.0 < $1.0 }
        if let (due, name) = next, !scheduler.isStopping {
            text += "; next: \(name) at \(Timestamp.format(SystemClock.now().realtime(at: due)))"
        }
        guard text != lastStatus else { return }
        lastStatus = text
        notifier.notify("STATUS=\(text)")
    }
}
