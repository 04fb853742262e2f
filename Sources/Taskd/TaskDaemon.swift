import TaskScheduling
import TaskdDaemon
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// A taskd daemon: the tasks an app declares in code, the SwiftUI way, plus the command tasks of
/// its configuration directory, served on the control socket and reported to the journal.
///
/// ```swift
/// @main struct Weather {
///     static func main() async {
///         await TaskDaemon(name: "weatherd")
///             .backgroundTask(.appRefresh("WEATHER_DATA")) { context in
///                 try await refreshWeather(until: context.deadline)
///             }
///             .run()
///     }
/// }
/// ```
public struct TaskDaemon: Sendable {
    /// The program's name: in `--help`, `--version`, messages, the journal's `SYSLOG_IDENTIFIER`
    /// (`journalctl -t NAME`) and Varlink `GetInfo`'s product.
    public var name: String
    /// The app's version, for `--version` and `GetInfo`; nil reports taskd's own.
    public var version: String?
    private var chain: RegistrationChain?
    /// Each task's registration, in the order of their last registration (a task registered again
    /// takes its new place).
    package var registrations: [TaskRegistration] { chain?.latest.map(\.registration) ?? [] }
    /// What is wrong with the registrations (a calendar that does not parse), one line each,
    /// `TASK: problem`: the daemon refuses to start with any.
    package var problems: [String] { chain?.latest.flatMap(\.problems) ?? [] }

    public init(name: String = "taskd", version: String? = nil) {
        self.name = name
        self.version = version
    }

    /// What `--version` prints: `NAME VERSION (taskd X.Y.Z)` for an app, `taskd X.Y.Z` for taskd.
    var versionLine: String { DaemonProcess(name: name, version: version, registrations: [], problems: []).versionLine }

    /// Registers `action` for `task`; a run starts on a wake that targets it or on its timers, and
    /// is cancelled (Swift task cancellation) `cancelGrace` before `budget` ends. `action` starts
    /// on taskd's event-loop thread (handed to a standby thread if it runs 5 ms without suspending)
    /// and resumes on the global concurrent executor after a suspension; an `onCancel` handler runs
    /// on the event-loop thread as user code (on taskd's cancel queue when that thread is held by
    /// user code already), never on the cooperative pool. A file `tasks.d/IDENTIFIER.task` without
    /// `ExecStart=` may set its budget, timers and policies instead.
    ///
    /// `every:` repeats the task `interval` after each run's start (`OnUnitActiveSec=`); the first run
    /// comes `onStartup` after the daemon starts, which defaults to `interval` when `every:` is given.
    /// Pass `onStartup: .zero` to run at once.
    ///
    /// `fleet:` `.once` runs each calendar slot of `schedule:` on one host of the fleet, `.max(n)`
    /// on at most n hosts at a time (`[Daemon] FleetEndpoints=`; docs/fleet.md): `context.fenceToken`
    /// carries the claim.
    public func backgroundTask(
        _ task: BackgroundTask<Void, Void>, description: String = "", budget: Duration? = nil,
        cancelGrace: Duration? = nil, onStartup: Duration? = nil, every interval: Duration? = nil,
        schedule: [TaskSchedule] = [], requires: [TaskRequirement] = [], alerts: [TaskAlerting] = [],
        overlap: OverlapPolicy = .coalesce, maxAttempts: Int = 1, progressTimeout: Duration? = nil,
        fleet: TaskFleet = .host, action: @escaping @Sendable (TaskContext<Void>) async throws -> Void
    ) -> TaskDaemon {
        let handler = TaskHandler { run, now, controls in
            try await action(TaskContext(run: run, payload: nil, now: now, controls: controls))
            return nil
        }
        return register(
            task.key, handler, description: description, budget: budget, cancelGrace: cancelGrace,
            onStartup: onStartup, every: interval, schedule: schedule, requires: requires, alerts: alerts,
            overlap: overlap, maxAttempts: maxAttempts, progressTimeout: progressTimeout, fleet: fleet)
    }

    /// Registers a typed `action`, as SwiftUI's `BackgroundTask<Request, Response>`: each wake's
    /// JSON payload is decoded as `Payload` (a payload that does not decode fails the run, with no
    /// retry), and the `Result` it returns is kept with the run. Throw `PermanentFailure` for no retry.
    public func backgroundTask<Payload: Decodable & Sendable, Result: Encodable & Sendable>(
        _ task: BackgroundTask<Payload, Result>, description: String = "", budget: Duration? = nil,
        cancelGrace: Duration? = nil, onStartup: Duration? = nil, every interval: Duration? = nil,
        schedule: [TaskSchedule] = [], requires: [TaskRequirement] = [], alerts: [TaskAlerting] = [],
        overlap: OverlapPolicy = .coalesce, maxAttempts: Int = 1, progressTimeout: Duration? = nil,
        fleet: TaskFleet = .host, action: @escaping @Sendable (TaskContext<Payload>) async throws -> Result
    ) -> TaskDaemon {
        let handler = TaskHandler { run, now, controls in
            let payload = try PayloadCodec.decode(Payload.self, from: run.payload)
            let result = try await action(TaskContext(run: run, payload: payload, now: now, controls: controls))
            return try PayloadCodec.encode(result)
        }
        return register(
            task.key, handler, description: description, budget: budget, cancelGrace: cancelGrace,
            onStartup: onStartup, every: interval, schedule: schedule, requires: requires, alerts: alerts,
            overlap: overlap, maxAttempts: maxAttempts, progressTimeout: progressTimeout, fleet: fleet)
    }

    private func register(
        _ key: TaskKey, _ handler: TaskHandler, description: String, budget: Duration?, cancelGrace: Duration?,
        onStartup: Duration?, every interval: Duration?, schedule: [TaskSchedule], requires: [TaskRequirement],
        alerts: [TaskAlerting], overlap: OverlapPolicy, maxAttempts: Int, progressTimeout: Duration?,
        fleet: TaskFleet
    ) -> TaskDaemon {
        var copy = self
        var definition = TaskDefinition(
            key: key, description: description, budget: budget.map(TimeSpan.init),
            cancelGrace: cancelGrace.map(TimeSpan.init), onStartup: onStartup.map { [TimeSpan($0)] } ?? [],
            onUnitActive: interval.map { [TimeSpan($0)] } ?? [], handler: .swift)
        definition.overlap = overlap
        definition.fleet = fleet
        definition.retry.maxAttempts = max(1, maxAttempts)
        definition.progressTimeout = progressTimeout.map(TimeSpan.init) ?? .zero
        for requirement in requires { requirement.apply(&definition) }
        for alerting in alerts { alerting.apply(&definition) }
        var problems: [String] = []
        for part in schedule {
            do throws(CalendarError) {
                try part.apply(&definition)
            } catch {
                problems.append("\(key.identifier): \(error)")
            }
        }
        // `every:` alone: the first run comes one interval after the start.
        if definition.onStartup.isEmpty, let first = definition.onUnitActive.min() {
            definition.onStartup = [first]
        }
        copy.chain = RegistrationChain(
            TaskRegistration(definition: definition, handler: handler), problems: problems, previous: chain)
        return copy
    }

    /// Runs with the process's command line and exits with the daemon's status.
    public nonisolated(nonsending) func run() async -> Never {
        let status = await run(arguments: Array(CommandLine.arguments.dropFirst()))
        exit(status)
    }

    /// `run()` for a synchronous `main`: runs with the process's command line on taskd's event loop
    /// and exits with the daemon's status, while the calling thread waits with every signal blocked.
    /// Call it from the main thread. That thread never drains the main queue, so `@MainActor` code
    /// does not run in such a daemon: use `run()` from an async `main` for that.
    ///
    /// An async `main` ends its main thread with `pthread_exit`, which loads libgcc's unwinder and
    /// reads the program's unwind tables: the stock `taskd`, started this way, keeps about 0.45 MiB
    /// less resident (measured).
    public func runMain() -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst())
        Task(executorPreference: EventLoop.shared) { exit(await runOnLoop(arguments: arguments)) }
        Thread.park()
    }

    /// Runs with `arguments` (see `--help`) until SIGTERM or SIGINT; returns the exit status.
    ///
    /// taskd's own async code runs on its event loop, never on Swift's global concurrent executor:
    /// on Linux, libdispatch's first pool thread arms a one-second timer that ticks for the rest of
    /// the process's life, so a daemon whose handlers are all commands stays at zero wake-ups while
    /// idle. Swift handlers start on the loop's thread too; the timer starts with the first that
    /// resumes after a suspension (on the global executor). Process-wide tunables (glibc's malloc
    /// arenas and mmap threshold: `MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`, or `mallopt` from
    /// `main`) are the app's to set; this never sets them. The stock `taskd` keeps two arenas and a
    /// fixed 128 KiB threshold.
    public nonisolated(nonsending) func run(arguments: [String]) async -> Int32 {
        return await withTaskExecutorPreference(EventLoop.shared) { await runOnLoop(arguments: arguments) }
    }

    private func runOnLoop(arguments: [String]) async -> Int32 {
        await DaemonProcess(name: name, version: version, registrations: registrations, problems: problems)
            .run(arguments: arguments)
    }
}
