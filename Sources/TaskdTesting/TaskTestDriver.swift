import Synchronization
import TaskScheduling
import Taskd
import TaskdConfig
import TaskdDaemon
import TaskdMachine
import TaskdProtocol
import TaskdTestSupport

/// Runs the Swift tasks a `TaskDaemon` registers in the real daemon, as taskd runs them: the real
/// scheduler, payload decoding and result encoding, journal entries, history and retries. Time is
/// a manual clock the test moves (no sleeps: timers fire as it passes them), the machine is one the
/// test sets (conditions, system sleep), and the state folder is in memory.
///
/// ```swift
/// let driver = TaskTestDriver(myDaemon)
/// let run = try await driver.wake("WEATHER_DATA", payloadJSON: #"{"city": "Oslo"}"#)
/// let ended = await run.finish()
/// #expect(ended.outcome == .completed)
/// ```
public final class TaskTestDriver: Sendable {
    let daemon: Daemon
    let clock = ManualClock()
    let tracker = RunTracker()
    let recorder: LogRecorder
    let machine = ManualMachine()
    private let interrupts = CheckpointInterrupts()
    private let registrations: [String: TaskRegistration]
    private let problems: [String]
    private let started = Mutex(false)

    /// A driver for the Swift tasks `daemon` registers (its configuration folder is not read). The
    /// clock stands at 2026-01-01 00:00 UTC; the tasks' timers count from there.
    public init(_ daemon: TaskDaemon) {
        var byName: [String: TaskRegistration] = [:]
        for registration in daemon.registrations { byName[registration.definition.key.identifier] = registration }
        registrations = byName
        problems = daemon.problems
        recorder = LogRecorder(clock: clock)
        let config = LoadedConfig(
            daemon: DaemonSettings(), tasks: byName.values.map(\.definition).sorted { $0.key < $1.key },
            diagnostics: [])
        let machine = self.machine
        let ports = DaemonPorts(
            clock: clock, commands: NoCommandLauncher(), machine: { machine.connect($0) },
            store: MemoryStore(), journal: EventJournal(backend: recorder), loadConfig: { config },
            random: SeededRandom(seed: 1))
        let interrupts = self.interrupts
        self.daemon = Daemon(
            config: config, handlers: byName.mapValues { interrupts.instrument($0.handler) }, records: [:],
            ports: ports)
        interrupts.attach { [weak self] how, key, runID in await self?.cut(runID, of: key, by: how) }
    }

    /// Cuts run `runID` short as `how` says.
    private func cut(_ runID: String, of key: TaskKey, by how: Interruption) async {
        switch how {
        case .cancel:
            _ = try? await daemon.cancel(target: key.description, peer: PeerCredentials(pid: 0, uid: 0, gid: 0))
        case .sleep:
            await systemSleeps()
        case .budget:
            guard let run = tracker.run(runID), run.killAt > clock.now().monotonic else { return }
            await clock.advance(by: run.killAt - clock.now().monotonic)
        }
    }

    /// The names of the tasks the daemon registers.
    public var tasks: [String] { registrations.keys.sorted() }

    /// Starts a run of `task` as a wake does: `payloadJSON` is the wake's payload (nil: none), `id`
    /// its `--id`. The handler starts at once (or the run waits, as taskd's would: for a free slot,
    /// a condition, the run before it).
    public func wake(_ task: String, payloadJSON: String? = nil, id: String? = nil) async throws -> TestRun {
        try await start(task, trigger: .wake, attempt: 1, wakeID: id, payloadJSON: payloadJSON)
    }

    /// Starts a run of `task` as `trigger` would, as attempt `attempt`, with a wake's id and payload.
    public func start(
        _ task: String, trigger: TaskTrigger = .wake, attempt: Int = 1, wakeID: String? = nil,
        payloadJSON: String? = nil
    ) async throws -> TestRun {
        guard problems.isEmpty else { throw TestDriverError.invalidRegistration(problems) }
        guard let registration = registrations[task] else { throw TestDriverError.noSuchTask(task, known: tasks) }
        guard attempt >= 1 else { throw TestDriverError.invalidAttempt(attempt) }
        await startDaemon()
        let key = registration.definition.key
        let daemon = self.daemon
        let run = await Self.onLoop {
            daemon.isolatedOnLoop { $0.trigger(key, trigger, attempt: attempt, wakeID: wakeID, payload: payloadJSON) }
        }
        guard let run else { throw TestDriverError.noRunStarted(task) }
        return TestRun(run: run, driver: self)
    }

    /// Moves the clock forward by `duration`: every deadline passed on the way is met at its time
    /// (timers fire and start runs, budgets cancel and stop them, retries start), in order.
    public func advance(by duration: Duration) async {
        await startDaemon()
        await clock.advance(by: TaskHandler.microseconds(duration))
    }

    /// The driver's clock now, as a handler reads it (`context.now`): the instants of
    /// `context.deadline` and `scheduledAt` are on this time line, which moves only with `advance`.
    public var now: ContinuousClock.Instant { clock.continuousNow }

    /// How long the clock has moved since the driver was made.
    public var elapsed: Duration {
        .microseconds(Int64(clamping: clock.now().monotonic - ManualClock.origin.monotonic))
    }

    /// Every run of `task` so far, oldest first (those timers, retries and wakes started).
    public func runs(of task: String) -> [TestRun] {
        tracker.runs.filter { $0.key.identifier == task }.map { TestRun(run: $0, driver: self) }
    }

    /// Cuts the next run of `task` short right after its handler kept its `count`-th checkpoint
    /// (`context.checkpoint`), once that checkpoint is on disk and before the call returns, in the
    /// way `how` says. The task's next run starts from that checkpoint (`context.resumeState`).
    public func interrupt(_ task: String, afterCheckpoint count: Int, by how: Interruption = .cancel) {
        interrupts.arm(task, after: max(1, count), by: how)
    }

    /// The checkpoint kept for `task`'s next run, as JSON text; nil when there is none (no run kept
    /// one, or the last run completed).
    public func checkpoint(of task: String) async throws -> String? {
        await startDaemon()
        return try await daemon.keptCheckpoint(task)?.value
    }

    /// The run of `task` that comes after `previous` (nil: its first run), once it has started
    /// or is waiting: a retry due once an abandoned handler returns, a timer's run, a run at resume.
    /// Move the clock first if what starts it is due later.
    public func nextRun(of task: String, after previous: TestRun?) async -> TestRun {
        let count = previous.map { previous in runs(of: task).firstIndex { $0.runID == previous.runID }.map { $0 + 1 } }
        let run = await tracker.run(of: task, after: (count ?? 0) ?? runs(of: task).count)
        return TestRun(run: run, driver: self)
    }

    /// Makes the machine fail `requirements` (`.acPower`, `.network`, `.idle(for:)`, …), every
    /// other requirement holding: runs that need them wait (or are cancelled, `ConditionLost=`).
    public func setUnmet(_ requirements: [TaskRequirement]) async {
        var probe = TaskDefinition(key: TaskKey(kind: "processing", identifier: "probe"), handler: .swift)
        for requirement in requirements { requirement.apply(&probe) }
        await startDaemon()
        let machine = self.machine
        machine.set(unheld: probe.conditions)
        await Self.onLoop { machine.send(.conditions) }
    }

    /// The system is about to sleep, as logind says before a suspend: runs are cancelled (reason
    /// `sleep`) unless their task keeps the system awake, and none starts until `systemResumes()`.
    public func systemSleeps() async {
        await startDaemon()
        let machine = self.machine
        await Self.onLoop { machine.send(.prepareForSleep) }
    }

    /// The system woke up: the runs sleep cut short run again (trigger `.resume`), timers catch up.
    public func systemResumes() async {
        let machine = self.machine
        await Self.onLoop { machine.send(.resumed) }
    }

    /// Every journal entry so far (each entry's fields: `MESSAGE`, `MESSAGE_ID`, `TASK_OUTCOME`, …).
    public var journal: [[String: String]] { recorder.all.map(\.fields) }

    /// Starts the daemon on first use: its start-up timers count from the clock's origin.
    private func startDaemon() async {
        guard
            started.withLock({ s in
                defer { s = true }; return !s
            })
        else { return }
        await daemon.subscribe(tracker)
        await daemon.start(recovering: [])
        await Self.onLoop {}
    }

    /// Runs `body` on the event loop, and returns once what it left for later there has run too.
    static func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        let result = Mutex<T?>(nil)
        await ManualClock.onLoop { result.withLock { $0 = body() } }
        return result.withLock { $0! }
    }
}
