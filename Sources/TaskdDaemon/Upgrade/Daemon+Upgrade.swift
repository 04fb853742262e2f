import TaskRuntime
import TaskScheduling
import TaskdControl
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's part of an upgrade in place (`taskctl upgrade`, SIGUSR2; `Upgrader` drives it):
/// Swift handlers' runs are cancelled first, the command runs handed over, and taken over again by
/// the new image (or by this one, if the `execve` failed).
extension Daemon {
    /// `Upgrade`: the first call raises SIGUSR2, which the process's signal loop turns into the
    /// upgrade; every call waiting then gets its answer. Only root or taskd's own user.
    package func upgrade(
        peer: PeerCredentials,
        reply: @escaping @Sendable (Result<SchedulerInterface.Upgrade.Reply, UpgradeFailure>) -> Void
    ) throws {
        try checkAdmin(peer)
        upgradeCalls.append(reply)
        if upgradeCalls.count == 1 { kill(getpid(), SIGUSR2) }
    }

    /// Answers every `Upgrade` call waiting.
    func answerUpgradeCalls(_ result: Result<SchedulerInterface.Upgrade.Reply, UpgradeFailure>) {
        let calls = upgradeCalls
        upgradeCalls = []
        for call in calls { call(result) }
    }

    /// The upgrade did not happen (`reason`): the calls hear why, runs start again.
    func upgradeFailed(_ reason: String) {
        journal.daemon(.upgradeFailed, 3, "upgrade failed: \(reason)")
        answerUpgradeCalls(.failure(UpgradeFailure(reason: reason)))
        perform(scheduler.abandonUpgrade(at: clock.now()))
        replay(scheduler.takeCutShort(), after: "upgrade that did not happen")
    }

    /// No run starts from now on; each Swift handler's run is cancelled (reason `upgrade`) and
    /// awaited: it returns, or is abandoned at its hard stop, one `CancelGraceSec=` later.
    func beginUpgrade() async {
        perform(scheduler.beginUpgrade(at: clock.now()))
        if scheduler.activeInProcess > 0 { await withCheckedContinuation { upgradeWaiters.append($0) } }
    }

    /// systemd restarts taskd and the command runs live outside its unit (the run keeper's scope):
    /// they go on, for the next taskd to take over from the keeper. Swift handlers' runs are
    /// cancelled (reason `restart`) and awaited as for an upgrade, and run again after.
    package func leaveRunsForRestart() async {
        perform(scheduler.beginUpgrade(at: clock.now(), reason: .restart))
        let grace = scheduler.runs.values.map(\.cancelGrace.microseconds).max() ?? 0
        status.notifier.notify("STOPPING=1\nSTATUS=Restarting: command runs go on")
        if grace > 0 { status.notifier.notify("EXTEND_TIMEOUT_USEC=\(grace + 5_000_000)") }
        if scheduler.activeInProcess > 0 { await withCheckedContinuation { upgradeWaiters.append($0) } }
        let left = handOffRuns()
        journal.daemon(
            .daemonStopping, 5,
            "restarting: \(left.count) command run(s) go on under taskd-keeper, for the next taskd to take over",
            [("TASKD_HANDED_RUNS", String(left.count))])
        await store.waitDurable(store.add([]))
        let cut = scheduler.takeCutShort()
        if !cut.isEmpty, let problem = cutRuns?.save(cut) { journal.daemon(.stateError, 3, problem) }
    }

    /// Whether the command runs outlive taskd's unit (the run keeper is in a scope of its own).
    package var commandsOutliveUnit: Bool { commands.runsOutliveUnit }

    /// Stops watching every active command run and returns them for the hand-off, in id order.
    func handOffRuns() -> [HandedRun] {
        var handed: [HandedRun] = []
        for id in scheduler.runs.keys.sorted() {
            guard let run = scheduler.runs[id], !run.inProcess, let snapshot = RunSnapshot(run),
                let (command, killSignal) = commands.handOff(id)
            else { continue }
            handed.append(HandedRun(run: snapshot, command: command, killSignal: killSignal))
        }
        return handed
    }

    /// Takes on the timers of the image before an upgrade (`Scheduler.carryTimers`); before `start`.
    package func carryTimers(_ carries: [TimerCarry]) {
        scheduler.carryTimers(carries, at: clock.now())
    }

    /// Runs again what an upgrade or a restart cut short (`Scheduler.replay`), journaled.
    package func replay(_ cut: [CutRun], after event: String) {
        guard !cut.isEmpty else { return }
        let (count, actions) = scheduler.replay(cut, at: clock.now())
        journal.daemon(
            .runsResumed, 5,
            "running again \(count) run(s) that the \(event) cut short"
                + (count < cut.count ? "; \(cut.count - count) of them name a task that no longer exists" : ""),
            [("TASKD_RESUMED_RUNS", String(count))])
        perform(actions)
    }

    /// Takes over the command runs an earlier image handed over (`known`: runs this image has
    /// already, when the `execve` failed; `upgraded`: handed over by an upgrade, not left with the
    /// run keeper by a taskd that stopped); each adoption is journaled. Returns the acknowledged
    /// wakes they answer for, which are not to run again. A run that cannot be taken over has its
    /// processes killed and ends failed, saying why: nothing runs unwatched.
    @discardableResult
    func adopt(_ handed: [HandedRun], known: Bool = false, upgraded: Bool = true) -> Set<String> {
        var records: Set<String> = []
        var fenced: [String] = []
        for h in handed {
            guard let run = known ? scheduler.runs[h.run.id] : h.run.run else {
                journal.daemon(
                    .upgradeFailed, 3,
                    "run \(h.run.id.prefix(8)) of \(h.run.identifier): its hand-off cannot be read; its processes are killed"
                )
                kill(-h.command.pid, SIGKILL)
                h.command.pipes.forEach { close($0.fd) }
                continue
            }
            if !known { scheduler.adopt(run) }
            records.formUnion(run.records)
            var spec: CommandSpec?
            if case .command(let s)? = scheduler.tasks[run.key]?.definition.handler { spec = s }
            if let problem = commands.adopt(run, h.command, killSignal: h.killSignal, spec: spec, reporter: self) {
                kill(-h.command.pid, SIGKILL)
                perform(
                    scheduler.handlerEnded(
                        runID: run.id, termination: .spawnFailed("taking it over after the upgrade: \(problem)"),
                        at: clock.now()))
                continue
            }
            if !known {
                journal.adopted(
                    run, pid: h.command.pid,
                    after: h.command.kept == true && !upgraded ? "the previous taskd stopped" : "the upgrade")
                if activeRuns != nil {
                    activeSnapshots[run.id] = h.run
                    activeChanged = true
                }
                if run.fenceToken != nil { fenced.append(run.id) }
            }
        }
        // A fleet run's claim hung on the lease of the taskd that started it, which renews it no
        // more: another host takes the slot over once it lapses, so the run is cancelled first.
        if !fenced.isEmpty {
            journal.daemon(
                .fenceLost, 4,
                "fleet: \(fenced.count) run(s) taken over from the previous taskd held claims on its lease, "
                    + "which this one cannot renew; they are cancelled",
                [("TASKD_FLEET_FENCE_LOST", String(fenced.count))])
            var actions: [SchedulerAction] = []
            for id in fenced {
                if let cancelled = try? scheduler.cancel(target: id, reason: .fenceLost, at: clock.now()) {
                    actions += cancelled.actions
                }
            }
            perform(actions)
        }
        if !known { afterChange(rearm: true) }
        return records
    }
}

extension Daemon {
    /// Hands the command runs over and execs the new image (`UpgradeHandoff.exec`), with nothing of
    /// the daemon running in between; returns only if the `execve` failed, with why, the runs
    /// watched here again. The `Upgrade` calls are answered just before.
    func execUpgrade(
        from previous: String, to version: String, executable: String, arguments: [String],
        server: ControlSocketServer, flush: () -> Void
    ) -> String {
        let runs = handOffRuns()
        answerUpgradeCalls(.success(.init(previousVersion: previous, version: version, runs: runs.count)))
        journal.daemon(
            .upgradeStarted, 5, "upgrading in place to \(version): \(runs.count) command run(s) handed over",
            [("TASKD_HANDED_RUNS", String(runs.count)), ("TASKD_NEW_VERSION", version)])
        flush()
        let handoff = UpgradeHandoff(
            previousVersion: previous, listenFD: server.listeningDescriptor, socketPath: server.path,
            socketActivated: server.isActivated, runs: runs, replays: scheduler.cutShort,
            timers: scheduler.timerCarries, keeperFD: commands.keeperDescriptor)
        let failure = handoff.exec(executable, arguments: arguments)
        adopt(runs, known: true)
        return failure
    }
}
