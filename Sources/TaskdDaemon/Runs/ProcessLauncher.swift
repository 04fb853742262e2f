import Synchronization
import TaskRuntime
import TaskScheduling
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Runs commands as real processes: spawned with their `TASKD_*` environment, in a cgroup of their
/// own when runs get one (`RunCgroups=`), their output journaled line by line and their notify
/// lines (`PROGRESS=`, `STATUS=`) handed to the daemon. The run keeper spawns them where there is
/// one (started with the first run), so that they outlive taskd. Called on the event loop; its
/// state is behind a lock (uncontended there), as the keeper's loss is told on another thread.
final class ProcessLauncher: CommandLauncher, Sendable {
    private let journal: EventJournal
    private let stateDirectory: String
    /// Where command runs get cgroups of their own (nil: process groups).
    private let cgroups: RunCgroups?
    private struct State {
        /// Tasks whose resource limits were reported as not applied (said once per task).
        var limitsReported: Set<TaskKey> = []
        /// The processes running now, each with the signal that cancels it.
        var active: [String: (process: CommandProcess, killSignal: Int32)] = [:]
        /// The run keeper: the one a taskd before this one left, or one started with the first run
        /// from `keeperExecutable` (nil: runs are taskd's own children and end with it).
        var keeper: RunKeeper?
        var keeperExecutable: String?
        /// Set once taskd told the keeper to exit: its going away is then no loss.
        var keeperQuit = false
    }
    private let state: Mutex<State>
    var keeper: RunKeeper? { state.withLock { $0.keeper } }
    /// The keeper and the runs live in a scope of their own, outside taskd's unit (`KeeperScope`).
    let runsOutliveUnit: Bool
    /// taskd's unit, named in the output the keeper journals from that scope (`journalctl -u`).
    private let unit: String?

    init(
        journal: EventJournal, stateDirectory: String, cgroups: RunCgroups?, keeper: RunKeeper? = nil,
        keeperExecutable: String? = nil, runsOutliveUnit: Bool = false
    ) {
        self.runsOutliveUnit = runsOutliveUnit
        self.unit = runsOutliveUnit ? KeeperScope.ownUnit() : nil
        self.journal = journal
        self.stateDirectory = stateDirectory
        self.cgroups = cgroups
        state = Mutex(State(keeper: keeper, keeperExecutable: keeperExecutable))
        keeper.map(watchLoss)
    }

    /// The keeper, started now if there is none yet; nil (journaled once) if it cannot start:
    /// runs are then taskd's own children.
    private func runKeeper() -> RunKeeper? {
        let (kept, executable) = state.withLock { ($0.keeper, $0.keeperExecutable) }
        if let kept, !kept.isGone { return kept }
        guard let executable else { return nil }
        switch RunKeeper.start(stateDirectory: stateDirectory, executable: executable) {
        case .success(let started):
            state.withLock { $0.keeper = started }
            watchLoss(started)
            return started
        case .failure(let error):
            state.withLock { $0.keeperExecutable = nil }
            journal.daemon(
                .stateError, 3, "cannot start the run keeper (\(error.message)): command runs will not outlive taskd")
            return nil
        }
    }

    var keeperDescriptor: Int32? { keeper.flatMap { $0.isGone ? nil : $0.descriptor } }

    func quitKeeper() {
        state.withLock {
            $0.keeperQuit = true
            return $0.keeper
        }?.quit()
    }

    private func watchLoss(_ keeper: RunKeeper) {
        let journal = self.journal
        keeper.whenLost { [weak self] in
            guard self?.state.withLock({ $0.keeperQuit }) != true else { return }
            journal.daemon(
                .stateError, 3,
                "taskd-keeper, the parent of the command runs, went away; a new one starts with the next run")
        }
    }

    func start(_ run: Run, _ spec: CommandSpec, reporter: any RunReporter) -> Termination? {
        let journal = self.journal
        var cgroup: RunCgroup?
        do {
            cgroup = try makeCgroup(run, limits: spec.limits)
            let keeper = runKeeper()
            let process = try CommandProcess.spawn(
                argv: spec.argv,
                environment: HandlerEnvironment.build(run: run, spec: spec, stateDirectory: stateDirectory),
                workingDirectory: spec.workingDirectory, stdin: run.payload,
                identity: spec.identity, outputLimit: spec.outputLimit, cgroup: cgroup, keeper: keeper,
                runID: run.id, snapshot: keeper != nil ? Self.snapshot(of: run) : [],
                keptOutput: keeper != nil ? journal.keptOutput(of: run, limit: spec.outputLimit, unit: unit) : nil,
                onOutput: Self.output(of: run, limit: spec.outputLimit, journal: journal, reporter: reporter),
                onExit: Self.exit(of: run, reporter: reporter))
            state.withLock { $0.active[run.id] = (process, spec.killSignal) }
            return nil
        } catch {
            cgroup?.remove()
            return .spawnFailed(error.message)
        }
    }

    func signal(_ runID: String, hard: Bool) {
        guard let (process, killSignal) = state.withLock({ $0.active[runID] }) else { return }
        process.signalGroup(hard ? SIGKILL : killSignal)
    }

    func ended(_ runID: String) { state.withLock { $0.active[runID] = nil } }

    func joined(_ run: Run) {
        let (process, keeper) = state.withLock { ($0.active[run.id]?.process, $0.keeper) }
        guard let process, process.isKept, let keeper else { return }
        keeper.note(process.pid, snapshot: Self.snapshot(of: run))
    }

    func handOff(_ runID: String) -> (CommandHandoff, killSignal: Int32)? {
        guard let (process, killSignal) = state.withLock({ $0.active.removeValue(forKey: runID) }) else { return nil }
        return (process.handOff(), killSignal)
    }

    func adopt(
        _ run: Run, _ handoff: CommandHandoff, killSignal: Int32, spec: CommandSpec?, reporter: any RunReporter
    ) -> String? {
        var cgroup: RunCgroup?
        if handoff.cgroup != nil {
            do {
                guard let cgroups else { return "run cgroups are off now" }
                cgroup = try cgroups.adopt(runID: run.id)
            } catch {
                return error.message
            }
        }
        let limit = spec?.outputLimit ?? .off
        let process = CommandProcess.adopt(
            handoff, outputLimit: limit, cgroup: cgroup, keeper: keeper,
            keptOutput: journal.keptOutput(of: run, limit: limit, unit: unit),
            onOutput: Self.output(of: run, limit: limit, journal: journal, reporter: reporter),
            onExit: Self.exit(of: run, reporter: reporter))
        state.withLock { $0.active[run.id] = (process, spec?.killSignal ?? killSignal) }
        return nil
    }

    /// The run as the keeper keeps it for a taskd that starts after a crash before the list of
    /// runs in progress (`ActiveRunsFile`, written every 10 ms) named it; none past `snapshotLimit`
    /// (a large payload): such a run relies on that list alone.
    private static func snapshot(of run: Run) -> [UInt8] {
        guard let snapshot = RunSnapshot(run), let json = try? JSONValueEncoder().encode(snapshot) else { return [] }
        let bytes = Array(json.description.utf8)
        return bytes.count <= snapshotLimit ? bytes : []
    }

    /// The largest snapshot the keeper is given: requests stay well within its socket's buffer.
    static let snapshotLimit = 65536

    /// Where a command's lines go: output to the journal, notify lines to the daemon.
    private static func output(
        of run: Run, limit: OutputRateLimit, journal: EventJournal, reporter: any RunReporter
    ) -> @Sendable (CommandOutput) -> Void {
        { output in
            guard case .notification(let line) = output else { return journal.output(output, run: run, limit: limit) }
            guard let report = NotifyLine.parse(line[...]) else { return }
            reporter.progressed(runID: run.id, report)
        }
    }

    private static func exit(of run: Run, reporter: any RunReporter) -> @Sendable (Termination, RunUsage) -> Void {
        { termination, usage in reporter.ended(runID: run.id, termination: termination, result: nil, usage: usage) }
    }

    /// The run's cgroup, if runs get one; resource limits that cannot apply (no run cgroups, or
    /// a controller systemd did not give) are journaled once per task.
    private func makeCgroup(_ run: Run, limits: ResourceLimits) throws(SpawnError) -> RunCgroup? {
        var unapplied: [String] = []
        let cgroup = try cgroups?.make(runID: run.id, limits: limits, unapplied: &unapplied)
        if cgroup == nil && !limits.isEmpty { unapplied = limits.files.map { "\($0.file)=\($0.value)" } }
        if !unapplied.isEmpty, state.withLock({ $0.limitsReported.insert(run.key).inserted }) {
            journal.daemon(
                .configError, 4,
                "\(run.key): resource limits not applied (\(unapplied.joined(separator: ", "))): "
                    + (cgroups == nil ? "command runs have no cgroup of their own" : "the controller is not delegated"))
        }
        return cgroup
    }
}
