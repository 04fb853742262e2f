import TaskRuntime
import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdIO
import TaskdMachine
import TaskdProcess
import TaskdSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The stages of `serve`, in the order they run: what a previous taskd left (an upgrade's
/// hand-off, the state folder, the keeper's runs), the daemon built on it, its recovery, the
/// announcement that it is ready, and the stop.
extension DaemonProcess {
    /// The new image of an upgrade in place: what the previous one handed over (nil: none, or
    /// unreadable, journaled).
    static func takeHandoff(journal: EventJournal) -> UpgradeHandoff? {
        switch UpgradeHandoff.take() {
        case .success(let handoff)?: return handoff
        case .failure(let error)?:
            journal.daemon(.upgradeFailed, 2, "the upgrade's hand-off could not be read; starting afresh: \(error)")
            return nil
        case nil: return nil
        }
    }

    /// Makes the state folder and checks its format; returns the runs the previous taskd had in
    /// progress (should it have stopped without ending them) and the file that keeps this one's,
    /// or nil if the folder is of a newer format (printed and journaled).
    func openStateFolder(_ directory: String, journal: EventJournal) -> ([RunSnapshot], ActiveRunsFile)? {
        ControlSocketServer.makeDirectories(directory)
        switch StateFormat.check(directory: directory) {
        case nil: break
        case .failed(let path, let reason)?:
            // As any other state error: scheduling goes on in memory, and the store says what fails.
            journal.daemon(.stateError, 3, "\(path): \(reason)")
        case let refusal?:
            journal.daemon(.stateError, 2, refusal.description)
            printError("\(name): \(refusal)")
            return nil
        }
        let (previouslyActive, problem) = ActiveRunsFile.take(directory: directory)
        if let problem { journal.daemon(.stateError, 3, problem) }
        return (previouslyActive, ActiveRunsFile(directory: directory) { journal.daemon(.stateError, 4, $0) })
    }

    /// Where command runs live: the run keeper (the one a taskd before this one left, if it was
    /// killed or crashed, with the runs it kept) and the run cgroups, which under systemd live in a
    /// scope outside taskd's unit.
    static func placeRuns(
        _ settings: DaemonSettings, stateDirectory: String, handoff: UpgradeHandoff?, previouslyActive: [RunSnapshot],
        journal: EventJournal
    ) async -> RunPlacement {
        let executable = settings.runKeeper == true ? KeptRuns.executable(beside: Upgrader.ownExecutable()) : nil
        var keeper = handoff?.keeperFD.map(RunKeeper.inherited) ?? RunKeeper.connect(stateDirectory: stateDirectory)
        let kept = handoff == nil ? keeper?.kept() ?? [] : []
        let keeping = Set((handoff?.runs.map(\.run.id) ?? []) + kept.map(\.runID))
        let placement = await KeptRuns.place(
            &keeper, executable: executable, stateDirectory: stateDirectory, keeping: keeping, journal: journal)
        let cgroups =
            placement.placed ? placement.cgroups : Self.setUpCgroups(settings, keeping: keeping, journal: journal)
        let handed =
            keeper.map {
                KeptRuns.handOvers(kept, snapshots: previouslyActive, cgroups: cgroups, keeper: $0, journal: journal)
            } ?? []
        return RunPlacement(
            keeper: keeper, keeperExecutable: executable, cgroups: cgroups, outliveUnit: placement.placed, kept: handed)
    }

    /// The daemon on the configuration (and the tasks `taskctl submit` added, kept in the state
    /// folder), its records, and the real ports; with its store, the acknowledged wakes to replay
    /// and the fleet client's slot.
    func makeDaemon(
        config: consuming LoadedConfig, configDirectory: String, required: Bool, stateDirectory: String,
        runs: RunPlacement, activeRuns: ActiveRunsFile, notifier: ServiceNotifier, journal: EventJournal
    ) async -> (Daemon, StateStore, [WakeRecord], FleetSlot) {
        var handlers: [String: TaskHandler] = [:]
        for r in registrations { handlers[r.definition.key.identifier] = r.handler }
        let syncInterval = config.daemon.syncInterval?.microseconds ?? StateStore.defaultSyncInterval
        let store = StateStore(directory: stateDirectory, syncInterval: syncInterval) { priority, problem in
            journal.daemon(.stateError, priority, problem)
        }
        // A passwd lookup may block (NSS): done once at start-up, before anything is served and on
        // the thread that loaded the configuration (see `runOnLoop`), not by each command's spawn.
        _ = HandlerEnvironment.ownUser
        let submitted = SubmittedFolder(stateDirectory: stateDirectory)
        let keptTasks = submitted.load { journal.daemon(.stateError, 4, $0) }
        if !keptTasks.tasks.isEmpty { config.tasks += keptTasks.tasks }
        var (records, problems) = await store.loadTasks(config.tasks.map(\.key))
        keptTasks.backdate(&records)
        let (wakes, logProblems) = await store.loadWakes()
        for problem in problems + logProblems { journal.daemon(.stateError, 4, problem) }
        let swiftTasks = registrations.map(\.definition)
        let fleet = FleetSlot()
        let ports = DaemonPorts(
            clock: SystemClock(),
            commands: ProcessLauncher(
                journal: journal, stateDirectory: stateDirectory, cgroups: runs.cgroups, keeper: runs.keeper,
                keeperExecutable: runs.keeperExecutable, runsOutliveUnit: runs.outliveUnit),
            machine: { MachineWatch(onEvent: $0) }, store: store, journal: journal, notifier: notifier,
            loadConfig: { ConfigLoader.load(directory: configDirectory, swiftTasks: swiftTasks, required: required) },
            random: SystemRandom(), machineID: Self.machineID(), cutRuns: CutRunsFile(directory: stateDirectory),
            activeRuns: activeRuns, fleet: fleet.maker(config.daemon.fleet), submitted: submitted)
        let daemon = Daemon(config: consume config, handlers: handlers, records: records, ports: ports)
        // The parsed files are garbage now: give their pages back (0.8 MiB with 10,000 tasks).
        MallocArenas.trim()
        return (daemon, store, wakes, fleet)
    }

    /// Takes over what the previous taskd left: the runs an upgrade handed over and the keeper
    /// kept first (the wakes they answer for are not replayed), its timers, then the acknowledged
    /// wakes, the runs a restart cut short, and the runs it left in progress (recorded lost).
    func recover(
        _ daemon: Daemon, handoff: UpgradeHandoff?, keptRuns: [HandedRun], wakes: [WakeRecord],
        previouslyActive: [RunSnapshot], stateDirectory: String, journal: EventJournal
    ) async {
        let adopted = await daemon.withIsolation { daemon in
            let upgrades = daemon.component(Upgrades.self)
            let adopted = upgrades.adopt(handoff?.runs ?? [], in: daemon)
                .union(upgrades.adopt(keptRuns, upgraded: false, in: daemon))
            daemon.scheduler.carryTimers(handoff?.timers ?? [], at: daemon.clock.now())
            return adopted
        }
        if let handoff {
            journal.daemon(
                .upgraded, 5,
                "\(versionLine) upgraded in place from \(handoff.previousVersion): \(handoff.runs.count) run(s) adopted",
                [
                    ("TASKD_PREVIOUS_VERSION", handoff.previousVersion),
                    ("TASKD_ADOPTED_RUNS", String(handoff.runs.count)),
                ])
        }
        await daemon.start(recovering: wakes.filter { !adopted.contains($0.id) })
        let (cut, cutProblem) = CutRunsFile(directory: stateDirectory).take()
        if let cutProblem { journal.daemon(.stateError, 3, cutProblem) }
        await daemon.withIsolation { daemon in
            let upgrades = daemon.component(Upgrades.self)
            upgrades.replay(cut, after: "restart", in: daemon)
            upgrades.replay(handoff?.replays ?? [], after: "upgrade", in: daemon)
            daemon.component(Submissions.self).retireSpentAtStart(in: daemon)
        }
        let handed = Set((handoff?.runs ?? []).map(\.run.id) + keptRuns.map(\.run.id))
        if !keptRuns.isEmpty {
            journal.daemon(
                .runsKept, 5,
                "\(keptRuns.count) command run(s) outlived the previous taskd; taken over from taskd-keeper",
                [("TASKD_KEPT_RUNS", String(keptRuns.count))])
        }
        let lost = previouslyActive.filter { !handed.contains($0.id) }
        await daemon.withIsolation { $0.component(ActiveRuns.self).recordLost(lost, in: $0) }
    }

    /// Journals that taskd is ready, tells the service manager (READY=1, and the watchdog), and
    /// without one prints how to try it.
    func announceReady(
        _ daemon: Daemon, server: ControlSocketServer, notifier: ServiceNotifier, configDirectory: String,
        example: String?, journal: EventJournal
    ) async {
        let taskCount = await daemon.taskCount
        journal.daemon(
            .daemonReady, 5,
            "\(name) ready: \(taskCount) task(s) from \(configDirectory), socket \(server.path)"
                + (server.isActivated ? " (socket-activated)" : ""),
            [("TASKD_SOCKET", server.path), ("TASKD_TASK_COUNT", String(taskCount))])
        notifier.notify("READY=1\nMAINPID=\(getpid())")
        if let interval = notifier.watchdogPetInterval { await daemon.startWatchdog(every: interval) }
        if !notifier.hasManager { printHint(socketPath: server.path, example: example) }
    }

    /// Ends every run (or, when systemd restarts taskd and command runs outlive its unit, leaves
    /// them to the next taskd), and gives this host's fleet claims back now rather than at the end
    /// of their lease.
    func stop(
        _ daemon: Daemon, restarting: Bool, activeRuns: ActiveRunsFile, fleet: FleetSlot, journal: EventJournal
    ) async {
        if restarting, await daemon.commandsOutliveUnit {
            await daemon.withIsolation { await $0.component(Upgrades.self).leaveRunsForRestart(in: $0) }
            activeRuns.flush()
        } else {
            await daemon.withIsolation { await $0.component(Upgrades.self).shutdown(restarting: restarting, in: $0) }
            activeRuns.flush()
            // Every run has ended: the keeper has nothing left to keep.
            await daemon.quitKeeper()
        }
        if let client = fleet.client.withLock({ $0 }) { _ = await Thread.run { client.stop() } }
    }
}
