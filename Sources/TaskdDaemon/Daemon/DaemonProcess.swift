import TaskRuntime
import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdIO
import TaskdProtocol
import TaskdSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One taskd process, from its command line to its exit status: loads the configuration, starts
/// the `Daemon`, serves the control socket, tells the service manager, and stops on SIGTERM or
/// SIGINT (SIGHUP reloads). `TaskDaemon.run()` is an app's way in; this is what it runs.
package struct DaemonProcess: Sendable {
    /// The program's name and the app's version (nil: taskd's own).
    let name: String
    let version: String?
    let registrations: [TaskRegistration]
    /// What is wrong with the registrations, `TASK: problem`: the process refuses to start.
    let problems: [String]

    package init(name: String, version: String?, registrations: [TaskRegistration], problems: [String]) {
        self.name = name
        self.version = version
        self.registrations = registrations
        self.problems = problems
    }

    /// What `--version` prints: `NAME VERSION (taskd X.Y.Z)` for an app, `taskd X.Y.Z` for taskd.
    package var versionLine: String {
        guard name != "taskd" || version != nil else { return "taskd \(TaskdVersion.current)" }
        return [name, version, "(taskd \(TaskdVersion.current))"].compactMap { $0 }.joined(separator: " ")
    }

    /// The exit status when the state folder is of a newer format (`StateFormat`): sysexits'
    /// EX_CONFIG, which taskd.service's `RestartPreventExitStatus=` keeps from a restart loop.
    static let stateRefused: Int32 = 78

    /// `[Daemon]` connection keys over `ConnectionLimits.defaults`.
    static func connectionLimits(_ settings: DaemonSettings) -> ConnectionLimits {
        var limits = ConnectionLimits.defaults
        if let n = settings.maxConnections { limits.maxConnections = n }
        if let n = settings.maxConnectionsPerUser { limits.maxConnectionsPerUser = n }
        if let t = settings.idleTimeout { limits.idleTimeoutUSec = t.microseconds }
        if let t = settings.requestTimeout { limits.requestTimeoutUSec = t.microseconds }
        return limits
    }

    /// Runs with `arguments` (see `--help`) on taskd's event loop until SIGTERM or SIGINT; returns
    /// the exit status.
    package func run(arguments: [String]) async -> Int32 {
        let options: DaemonOptions
        do {
            options = try DaemonOptions(arguments: arguments)
        } catch {
            printError("\(name): \(error.message)")
            return 2
        }
        if options.help {
            print(DaemonOptions.usage(program: name))
            return 0
        }
        if options.version {
            print(versionLine)
            return 0
        }
        if !problems.isEmpty {
            // The tasks registered in code are the program's own: no configuration can mend them.
            for problem in problems { printError("\(name): error: task registered in code: \(problem)") }
            return 1
        }
        let configDirectory = options.configDirectory ?? DefaultPaths.configDirectory(of: name)
        // Loaded on this thread, before anything else runs: with a hop to another thread, the daemon's
        // states were allocated in another malloc arena than the parse's garbage, and RSS with
        // 10,000 tasks was 1.6–2.6 MiB higher (measured).
        let required = options.configDirectory != nil
        let config = ConfigLoader.load(
            directory: configDirectory, swiftTasks: registrations.map(\.definition), required: required)
        if options.checkConfig { return checkConfig(config, directory: configDirectory) }
        // A --config folder that is not there is a typo, not an empty configuration: refuse to start.
        if let missing = config.diagnostics.first(where: {
            $0.severity == .error && $0.location.file == configDirectory
        }) {
            printError("\(name): \(missing)")
            return 1
        }
        return await serve(
            config: consume config, options: options, configDirectory: configDirectory, required: required)
    }

    private func checkConfig(_ config: LoadedConfig, directory: String) -> Int32 {
        for d in config.diagnostics { printError(d.description) }
        let valid = config.isValid
        print(
            valid
                ? "\(directory): configuration is valid; \(config.tasks.count) task(s): "
                    + config.tasks.map { $0.key.description }.joined(separator: ", ")
                : "\(directory): configuration has errors")
        return valid ? 0 : 1
    }

    /// Serves until SIGTERM or SIGINT, in stages (`DaemonProcess+Startup`): the state folder, the
    /// runs a previous taskd left, the daemon, its recovery, the socket, then the stop. `config` is
    /// consumed: once the daemon holds its tasks, the loaded copy is dropped rather than kept alive
    /// by this frame for the daemon's whole life.
    private func serve(
        config: consuming LoadedConfig, options: DaemonOptions, configDirectory: String, required: Bool
    ) async -> Int32 {
        let (journal, log) = Self.makeJournal(name: name)
        defer { log.flush() }
        let handoff = Self.takeHandoff(journal: journal)
        for d in config.diagnostics {
            journal.daemon(
                .configError, d.severity == .error ? 3 : 4, d.description,
                [("CONFIG_FILE", d.location.file), ("CONFIG_LINE", String(d.location.line))])
        }
        let stateDirectory =
            options.stateDirectory ?? config.daemon.stateDirectory ?? DefaultPaths.stateDirectory(of: name)
        guard case let (previouslyActive, activeRuns)? = openStateFolder(stateDirectory, journal: journal) else {
            return Self.stateRefused
        }
        let socketPath = options.socketPath ?? config.daemon.socketPath ?? DefaultPaths.socketPath(of: name)
        signal(SIGPIPE, SIG_IGN)
        let signals = SignalWatcher([SIGTERM, SIGINT, SIGHUP, SIGUSR2])
        let runs = await Self.placeRuns(
            config.daemon, stateDirectory: stateDirectory, handoff: handoff, previouslyActive: previouslyActive,
            journal: journal)
        guard
            let server = Self.makeServer(
                path: socketPath, inherited: handoff, settings: config.daemon, journal: journal)
        else {
            return 1
        }
        let notifier = ServiceNotifier()
        let example = config.tasks.first?.key.identifier
        let (daemon, store, wakes, fleet) = await makeDaemon(
            config: consume config, configDirectory: configDirectory, required: required,
            stateDirectory: stateDirectory,
            runs: runs, activeRuns: activeRuns, notifier: notifier, journal: journal)
        let service = ControlService(
            daemon: daemon, journal: journal, product: name, version: version ?? TaskdVersion.current)
        let clockWatcher = ClockChangeWatcher(
            onChange: { Task(executorPreference: EventLoop.shared) { await daemon.clockChanged() } },
            onZoneChange: { Task(executorPreference: EventLoop.shared) { await daemon.clockChanged(zone: true) } })
        await recover(
            daemon, handoff: handoff, keptRuns: runs.kept, wakes: wakes, previouslyActive: previouslyActive,
            stateDirectory: stateDirectory, journal: journal)
        // Calls are served on the event loop that reads them, as the daemon runs there.
        server.start { service.handle($0, on: $1) }
        await announceReady(
            daemon, server: server, notifier: notifier, configDirectory: configDirectory, example: example,
            journal: journal)
        let upgrader = Upgrader(
            versionLine: versionLine, executable: Upgrader.ownExecutable(), arguments: CommandLine.arguments)
        let restarting = await reloadUntilStopped(daemon, signals: signals, journal: journal) {
            await upgrader.upgrade(
                daemon: daemon, server: server, store: store, log: log, notifier: notifier,
                resume: { server.start { service.handle($0, on: $1) } })
        }
        await stop(daemon, restarting: restarting, activeRuns: activeRuns, fleet: fleet, journal: journal)
        withExtendedLifetime(clockWatcher) {}
        server.stop()
        journal.daemon(.daemonStopping, 5, "\(name) stopped")
        // The last notifications (STOPPING=1) go out before the process ends; a manager that does
        // not read them within a second does not keep taskd from exiting.
        _ = await Thread.run { notifier.flush(waitingAtMost: 1) }
        return 0
    }

    /// Reloads at each SIGHUP, upgrades at each SIGUSR2; returns at SIGTERM or SIGINT, with
    /// whether systemd is restarting taskd (rather than stopping it: see `ServiceJob`).
    private func reloadUntilStopped(
        _ daemon: Daemon, signals: SignalWatcher, journal: EventJournal, upgrade: () async -> Void
    ) async -> Bool {
        for await number in signals.signals {
            if number == SIGHUP {
                _ = await daemon.reload()
                continue
            }
            if number == SIGUSR2 {
                await upgrade()
                continue
            }
            // SIGTERM from systemd: a restart job queued for the unit makes it a restart.
            let job =
                number == SIGTERM && ServiceNotifier().hasManager ? await Thread.run { ServiceJob.pendingType() } : ""
            let restarting = ServiceJob.isRestart(job)
            journal.daemon(
                .daemonStopping, 5,
                "\(name) received \(SignalNames.name(number)); " + (restarting ? "systemd restarts it" : "stopping")
                    + (job.map { $0.isEmpty ? "" : " (systemd's job for the unit: \($0))" }
                        ?? " (systemd's job for the unit could not be asked)"))
            return restarting
        }
        return false
    }

    /// The journal: journald (standard error without it), through a queue with its own thread.
    private static func makeJournal(name: String) -> (EventJournal, QueuedLogBackend) {
        let log = QueuedLogBackend(
            base: JournalLogBackend(identifier: name, fallback: StderrLogBackend(name: name)),
            shedNotice: { count in
                var entry = QueuedLogBackend.shedNotice(count)
                entry.set("MESSAGE_ID", MessageID.outputShed.rawValue)
                return entry
            })
        return (EventJournal(backend: log), log)
    }

    /// Each command run in a cgroup of its own where systemd delegated taskd's; else process
    /// groups, whose orphans taskd reaps as their subreaper (a cgroup's go to PID 1). Journaled.
    /// `keeping`: the runs an upgrade handed over, whose cgroups stay.
    static func setUpCgroups(_ settings: DaemonSettings, keeping: Set<String>, journal: EventJournal)
        -> RunCgroups?
    {
        let (cgroups, noCgroups) = RunCgroups.setUp(
            settings.runCgroups.flatMap(RunCgroups.Mode.init(rawValue:)) ?? .auto, keeping: keeping)
        if let cgroups {
            journal.daemon(
                .runCgroups, 6,
                "each command run gets a cgroup of its own \(cgroups.summary)",
                [("TASKD_CGROUP", cgroups.root)])
        } else {
            ProcessReaper.shared.becomeSubreaper()
            journal.daemon(
                .runCgroups, 5,
                "command runs are contained by process group, not cgroup: \(noCgroups); a command that calls setsid() escapes its budget's kill"
            )
        }
        return cgroups
    }

    /// The control socket's server (the one `inherited` names, socket-activated, or bound at
    /// `path`); nil, journaled, if it cannot serve.
    private static func makeServer(
        path: String, inherited: UpgradeHandoff?, settings: DaemonSettings, journal: EventJournal
    ) -> ControlSocketServer? {
        let onReject: @Sendable (PeerCredentials, String) -> Void = { peer, reason in
            journal.daemon(
                .requestRejected, 4, "rejected a request from \(peer): \(reason)",
                [("PEER_PID", String(peer.pid)), ("PEER_UID", String(peer.uid)), ("PEER_GID", String(peer.gid))])
        }
        let refusals = RefusalReporter(journal: journal)
        if let inherited {
            return ControlSocketServer(
                inherited: inherited.listenFD, path: inherited.socketPath, activated: inherited.socketActivated,
                limits: connectionLimits(settings), onReject: onReject, onRefuse: refusals.refused)
        }
        do {
            return try ControlSocketServer(
                path: path, limits: connectionLimits(settings), onReject: onReject, onRefuse: refusals.refused)
        } catch {
            journal.daemon(.configError, 2, "cannot serve the control socket: \(error)")
            return nil
        }
    }

    /// /etc/machine-id, for FixedRandomDelay= (empty when it cannot be read).
    static func machineID() -> String {
        guard case .success(let bytes) = FileIO.read("/etc/machine-id") else { return "" }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    func printHint(socketPath: String, example: String?) {
        var taskctl = "taskctl"
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 {
            let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let sibling = exe[..<(exe.lastIndex(of: "/") ?? exe.startIndex)] + "/taskctl"
            if access(String(sibling), X_OK) == 0 { taskctl = String(sibling) }
        }
        let socketFlag = socketPath == DefaultPaths.socketPath() ? "" : " --socket \(socketPath)"
        printError(
            "\(name): listening on \(socketPath); try:\n  \(taskctl)\(socketFlag) wake \(example ?? "TASK") --wait\n  \(taskctl)\(socketFlag) list"
        )
    }
}

func printError(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}
