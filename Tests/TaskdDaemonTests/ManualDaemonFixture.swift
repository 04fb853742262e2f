import Synchronization
import TaskScheduling
import TaskdConfig
import TaskdFleet
import TaskdIO
import TaskdMachine
import TaskdProtocol
import TaskdSystem
import TaskdTestSupport

@testable import TaskdDaemon

/// A `Daemon` on in-memory ports: a manual clock, a recording command launcher, a machine the test
/// sets, a state folder in memory and a recorded journal. No process, no logind, no sleep: time
/// moves when the test moves it, runs end when the test ends them.
final class ManualDaemonFixture: Sendable {
    static let root = PeerCredentials(pid: 1, uid: 0, gid: 0)
    let clock = ManualClock()
    let machine = ManualMachine()
    let launcher = RecordingLauncher()
    let recorder = LogRecorder()
    /// The fleet the daemon claims its fleet runs in (`fleet: true`).
    let fleet = ManualFleet()
    let store: any RunStore
    /// What the next `reload` loads.
    let nextConfig: ConfigSlot
    let daemon: Daemon

    /// A daemon with `tasks`, started at the clock's origin; `unheld` are the conditions that do
    /// not hold when it starts, `wakes` the acknowledged wakes it replays; with `fleet`, it has
    /// `FleetEndpoints=`, the fleet being `self.fleet`.
    init(
        _ tasks: [TaskDefinition], settings: DaemonSettings = ManualDaemonFixture.settings(),
        store: any RunStore = MemoryStore(), unheld: Set<TaskCondition> = [], recovering wakes: [WakeRecord] = [],
        fleet: Bool = false
    ) async {
        let config = LoadedConfig(daemon: settings, tasks: tasks)
        let nextConfig = ConfigSlot(config)
        let machine = self.machine
        machine.set(unheld: unheld)
        self.store = store
        self.nextConfig = nextConfig
        let manualFleet = self.fleet
        let connect: @Sendable (@escaping @Sendable (FleetEvent) -> Void) -> any FleetPort = { manualFleet.connect($0) }
        let ports = DaemonPorts(
            clock: clock, commands: launcher, machine: { machine.connect($0) }, store: store,
            journal: EventJournal(backend: recorder), loadConfig: { nextConfig.value },
            random: SeededRandom(seed: 1), fleet: fleet ? connect : nil)
        daemon = Daemon(config: config, handlers: [:], records: [:], ports: ports)
        let daemon = self.daemon
        await ManualClock.onLoop { daemon.isolatedOnLoop { $0.start(recovering: wakes) } }
    }

    /// Settings of a unit test: four slots whatever the machine's CPUs.
    static func settings(watchSleep: Bool? = nil, access: AccessList? = nil) -> DaemonSettings {
        var settings = DaemonSettings()
        settings.maxConcurrentRuns = 4
        settings.watchSleep = watchSleep
        settings.access = access
        return settings
    }

    /// A command task (its command never runs: the launcher records it).
    static func task(
        _ name: String, budget: TimeSpan = .seconds(600), grace: TimeSpan = .seconds(60),
        _ change: (inout TaskDefinition) -> Void = { _ in }
    ) -> TaskDefinition {
        var definition = TaskDefinition(
            key: TaskKey(kind: "processing", identifier: name), budget: budget, cancelGrace: grace,
            handler: .command(CommandSpec(argv: ["/bin/\(name)"])))
        change(&definition)
        return definition
    }

    /// Runs `body` on the daemon, on the event loop, and returns once the work it left for later
    /// there (after the handlers it started) has run.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (isolated Daemon) throws -> T) async throws -> T {
        let daemon = self.daemon
        let result = Mutex<Result<T, any Error>?>(nil)
        await ManualClock.onLoop {
            let outcome = Result { try daemon.isolatedOnLoop(body) }
            result.withLock { $0 = outcome }
        }
        return try result.withLock { $0! }.get()
    }

    /// Wakes `target` as `Wake` does; the runs of its reply. `watch` hears every later state.
    func wake(
        _ target: String, payload: String? = nil, peer: PeerCredentials = root,
        watch: (@Sendable (RunInfo) -> Void)? = nil
    ) async throws -> [RunInfo] {
        let (replies, reply) = AsyncStream.makeStream(of: [RunInfo].self)
        try await onLoop {
            try $0.wake(target: target, id: nil, payload: payload, peer: peer, watch: watch) { runs in
                reply.yield(runs)
                reply.finish()
            }
        }
        for await runs in replies { return runs }
        return []
    }

    /// The handler of `runID` ended (as the process launcher reports an exit).
    func end(_ runID: String, _ termination: Termination = .exited(0)) async {
        let daemon = self.daemon
        await ManualClock.onLoop { daemon.ended(runID: runID, termination: termination, result: nil, usage: nil) }
    }

    /// The machine tells the daemon of `event`, from the event loop.
    func send(_ event: MachineEvent) async {
        let machine = self.machine
        await ManualClock.onLoop { machine.send(event) }
    }

    /// Moves the clock forward, firing the daemon's timers on the way.
    func advance(by span: TimeSpan) async { await clock.advance(by: span.microseconds) }

    /// The task `name` as `Status` tells it.
    func status(_ name: String) async throws -> TaskInfo { try await onLoop { try $0.status(name: name) } }

    /// The last run of `name` the history kept (a cancelled run, whose result is stale, included).
    func lastRun(_ name: String) async throws -> RunInfo? {
        try await onLoop { try $0.history(name: name, limit: 1) }.first
    }

    /// The runs the launcher started for `task`, in order.
    func started(_ task: String) -> [Run] { launcher.started.filter { $0.key.identifier == task } }

    /// The journal entries with this MESSAGE_ID, in order.
    func entries(_ id: MessageID) -> [LogEntry] {
        recorder.entries.filter { $0["MESSAGE_ID"] == id.rawValue }
    }
}
