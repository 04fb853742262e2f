import TaskRuntime
import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's part of an upgrade in place (`taskctl upgrade`, SIGUSR2; `Upgrader` drives it)
/// and of a restart that leaves the command runs going: Swift handlers' runs are cancelled first,
/// the command runs handed over, and taken over again by the new image (or by this one, if the
/// `execve` failed); what they cut short runs again. A stop cancels every run and waits for them.
/// It keeps the `Upgrade` calls and whoever waits for runs to end.
package final class Upgrades: DaemonComponent {
    private var calls: [@Sendable (Result<SchedulerInterface.Upgrade.Reply, UpgradeFailure>) -> Void] = []
    /// Who waits for the Swift handlers' runs to end (an upgrade, a restart), and for every run to
    /// end (a stop).
    private var inProcessWaiters: [CheckedContinuation<Void, Never>] = []
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []

    package init(config: LoadedConfig, ports: DaemonPorts) {}

    package static var methods: [MethodRow<Daemon>] {
        [
            MethodRow(SchedulerInterface.Upgrade.self) { _, call, daemon in
                try daemon.component(Upgrades.self).upgrade(peer: call.peer, in: daemon) { result in
                    switch result {
                    case .success(let reply): call.reply(reply)
                    case .failure(let failure):
                        call.fail(VarlinkError(SchedulerInterface.upgradeFailed, ["reason": .string(failure.reason)]))
                    }
                }
            }
        ]
    }

    /// `Upgrade`: the first call raises SIGUSR2, which the process's signal loop turns into the
    /// upgrade; every call waiting then gets its answer. Only root or taskd's own user.
    func upgrade(
        peer: PeerCredentials, in daemon: isolated Daemon,
        reply: @escaping @Sendable (Result<SchedulerInterface.Upgrade.Reply, UpgradeFailure>) -> Void
    ) throws {
        try daemon.checkAdmin(peer)
        calls.append(reply)
        if calls.count == 1 { kill(getpid(), SIGUSR2) }
    }

    /// Answers every `Upgrade` call waiting.
    private func answer(_ result: Result<SchedulerInterface.Upgrade.Reply, UpgradeFailure>) {
        let waiting = calls
        calls = []
        for call in waiting { call(result) }
    }

    package func changed(in daemon: isolated Daemon) {
        if !stopWaiters.isEmpty, daemon.scheduler.runs.isEmpty {
            stopWaiters.forEach { $0.resume() }
            stopWaiters.removeAll()
        }
        if !inProcessWaiters.isEmpty, daemon.scheduler.activeInProcess == 0 {
            inProcessWaiters.forEach { $0.resume() }
            inProcessWaiters.removeAll()
        }
    }

    /// Cancels every run (reason `shutdown`, or `restart` when systemd restarts taskd) and returns
    /// once none is left: each ends by itself, or by the hard stop `CancelGraceSec` later. Their
    /// acknowledged wakes run after the restart; with `restarting`, the runs cut short that answer
    /// none are kept in the state folder to run again too (`CutRunsFile`).
    func shutdown(restarting: Bool = false, in daemon: isolated Daemon) async {
        let actions = daemon.scheduler.shutdown(at: daemon.clock.now(), reason: restarting ? .restart : .shutdown)
        let scheduler = daemon.scheduler
        let grace = scheduler.runs.values.map(\.cancelGrace.microseconds).max() ?? 0
        let count = scheduler.runs.values.filter(\.isActive).count
        daemon.status.notifier.notify("STOPPING=1\nSTATUS=Stopping: cancelling \(count) run(s)")
        if grace > 0 { daemon.status.notifier.notify("EXTEND_TIMEOUT_USEC=\(grace + 5_000_000)") }
        daemon.journal.daemon(
            .daemonStopping, 5,
            restarting
                ? "restarting: cancelling \(count) run(s), to run again once taskd is back"
                : "stopping: cancelling \(count) run(s)")
        daemon.perform(actions)
        if !daemon.scheduler.runs.isEmpty { await withCheckedContinuation { stopWaiters.append($0) } }
        await keepCutShort(daemon)
    }

    /// Once the state folder has every record, keeps the runs cut short to run again after the
    /// next start (`CutRunsFile`).
    private func keepCutShort(_ daemon: isolated Daemon) async {
        await daemon.store.waitDurable(daemon.store.add([]))
        let cut = daemon.scheduler.takeCutShort()
        if !cut.isEmpty, let problem = daemon.ports.cutRuns?.save(cut) {
            daemon.journal.daemon(.stateError, 3, problem)
        }
    }

    /// The upgrade did not happen (`reason`): the calls hear why, runs start again.
    func upgradeFailed(_ reason: String, in daemon: isolated Daemon) {
        daemon.journal.daemon(.upgradeFailed, 3, "upgrade failed: \(reason)")
        answer(.failure(UpgradeFailure(reason: reason)))
        daemon.perform(daemon.scheduler.abandonUpgrade(at: daemon.clock.now()))
        replay(daemon.scheduler.takeCutShort(), after: "upgrade that did not happen", in: daemon)
    }

    /// No run starts from now on; each Swift handler's run is cancelled (reason `upgrade`) and
    /// awaited: it returns, or is abandoned at its hard stop, one `CancelGraceSec=` later.
    func beginUpgrade(in daemon: isolated Daemon) async {
        daemon.perform(daemon.scheduler.beginUpgrade(at: daemon.clock.now()))
        if daemon.scheduler.activeInProcess > 0 { await withCheckedContinuation { inProcessWaiters.append($0) } }
    }

    /// systemd restarts taskd and the command runs live outside its unit (the run keeper's scope):
    /// they go on, for the next taskd to take over from the keeper. Swift handlers' runs are
    /// cancelled (reason `restart`) and awaited as for an upgrade, and run again after.
    func leaveRunsForRestart(in daemon: isolated Daemon) async {
        daemon.perform(daemon.scheduler.beginUpgrade(at: daemon.clock.now(), reason: .restart))
        let grace = daemon.scheduler.runs.values.map(\.cancelGrace.microseconds).max() ?? 0
        daemon.status.notifier.notify("STOPPING=1\nSTATUS=Restarting: command runs go on")
        if grace > 0 { daemon.status.notifier.notify("EXTEND_TIMEOUT_USEC=\(grace + 5_000_000)") }
        if daemon.scheduler.activeInProcess > 0 {
            await withCheckedContinuation { inProcessWaiters.append($0) }
        }
        let left = handOffRuns(daemon)
        daemon.journal.daemon(
            .daemonStopping, 5,
            "restarting: \(left.count) command run(s) go on under taskd-keeper, for the next taskd to take over",
            [("TASKD_HANDED_RUNS", String(left.count))])
        await keepCutShort(daemon)
    }

    /// Stops watching every active command run and returns them for the hand-off, in id order.
    private func handOffRuns(_ daemon: isolated Daemon) -> [HandedRun] {
        var handed: [HandedRun] = []
        for id in daemon.scheduler.runs.keys.sorted() {
            guard let run = daemon.scheduler.runs[id], !run.inProcess, let snapshot = RunSnapshot(run),
                let (command, killSignal) = daemon.commands.handOff(id)
            else { continue }
            handed.append(HandedRun(run: snapshot, command: command, killSignal: killSignal))
        }
        return handed
    }

    /// Runs again what an upgrade or a restart cut short (`Scheduler.replay`), journaled.
    func replay(_ cut: [CutRun], after event: String, in daemon: isolated Daemon) {
        guard !cut.isEmpty else { return }
        let (count, actions) = daemon.scheduler.replay(cut, at: daemon.clock.now())
        daemon.journal.daemon(
            .runsResumed, 5,
            "running again \(count) run(s) that the \(event) cut short"
                + (count < cut.count ? "; \(cut.count - count) of them name a task that no longer exists" : ""),
            [("TASKD_RESUMED_RUNS", String(count))])
        daemon.perform(actions)
    }

    /// Takes over the command runs an earlier image handed over (`known`: runs this image has
    /// already, when the `execve` failed; `upgraded`: handed over by an upgrade, not left with the
    /// run keeper by a taskd that stopped); each adoption is journaled. Returns the acknowledged
    /// wakes they answer for, which are not to run again. A run that cannot be taken over has its
    /// processes killed and ends failed, saying why: nothing runs unwatched.
    @discardableResult
    func adopt(
        _ handed: [HandedRun], known: Bool = false, upgraded: Bool = true, in daemon: isolated Daemon
    ) -> Set<String> {
        var records: Set<String> = []
        var fenced: [String] = []
        for h in handed {
            guard let run = known ? daemon.scheduler.runs[h.run.id] : h.run.run else {
                daemon.journal.daemon(
                    .upgradeFailed, 3,
                    "run \(h.run.id.prefix(8)) of \(h.run.identifier): its hand-off cannot be read; its processes are killed"
                )
                kill(-h.command.pid, SIGKILL)
                h.command.pipes.forEach { close($0.fd) }
                continue
            }
            if !known { daemon.scheduler.adopt(run) }
            records.formUnion(run.records)
            var spec: CommandSpec?
            if case .command(let s)? = daemon.scheduler.tasks[run.key]?.definition.handler { spec = s }
            if let problem = daemon.commands.adopt(
                run, h.command, killSignal: h.killSignal, spec: spec, reporter: daemon)
            {
                kill(-h.command.pid, SIGKILL)
                daemon.perform(
                    daemon.scheduler.handlerEnded(
                        runID: run.id, termination: .spawnFailed("taking it over after the upgrade: \(problem)"),
                        at: daemon.clock.now()))
                continue
            }
            if !known {
                daemon.journal.adopted(
                    run, pid: h.command.pid,
                    after: h.command.kept == true && !upgraded ? "the previous taskd stopped" : "the upgrade")
                daemon.component(ActiveRuns.self).adopted(h.run)
                if run.fenceToken != nil { fenced.append(run.id) }
            }
        }
        // A fleet run's claim hung on the lease of the taskd that started it, which renews it no
        // more: another host takes the slot over once it lapses, so the run is cancelled first.
        if !fenced.isEmpty {
            daemon.journal.daemon(
                .fenceLost, 4,
                "fleet: \(fenced.count) run(s) taken over from the previous taskd held claims on its lease, "
                    + "which this one cannot renew; they are cancelled",
                [("TASKD_FLEET_FENCE_LOST", String(fenced.count))])
            daemon.cancelRuns(fenced, reason: .fenceLost)
        }
        if !known { daemon.afterChange(rearm: true) }
        return records
    }

    /// Hands the command runs over and execs the new image (`UpgradeHandoff.exec`), with nothing of
    /// the daemon running in between; returns only if the `execve` failed, with why, the runs
    /// watched here again. The `Upgrade` calls are answered just before.
    func execUpgrade(
        from previous: String, to version: String, executable: String, arguments: [String],
        server: ControlSocketServer, in daemon: isolated Daemon, flush: () -> Void
    ) -> String {
        let runs = handOffRuns(daemon)
        answer(.success(.init(previousVersion: previous, version: version, runs: runs.count)))
        daemon.journal.daemon(
            .upgradeStarted, 5, "upgrading in place to \(version): \(runs.count) command run(s) handed over",
            [("TASKD_HANDED_RUNS", String(runs.count)), ("TASKD_NEW_VERSION", version)])
        flush()
        let handoff = UpgradeHandoff(
            previousVersion: previous, listenFD: server.listeningDescriptor, socketPath: server.path,
            socketActivated: server.isActivated, runs: runs, replays: daemon.scheduler.cutShort,
            timers: daemon.scheduler.timerCarries, keeperFD: daemon.commands.keeperDescriptor)
        let failure = handoff.exec(executable, arguments: arguments)
        adopt(runs, known: true, in: daemon)
        return failure
    }
}
