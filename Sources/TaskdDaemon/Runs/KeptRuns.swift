import TaskRuntime
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The command runs a taskd before this one left with the run keeper (it crashed, was killed or
/// restarted), made into hand-overs for `Daemon.adopt`, as an upgrade's are.
enum KeptRuns {
    /// The keeper's executable: `TASKD_KEEPER` if set (empty: no keeper, runs end with taskd),
    /// else `taskd-keeper` beside taskd or in `../libexec/NAME/` or `../libexec/taskd/` (`RunKeeper.locate`).
    static func executable(beside taskd: String) -> String? {
        if let named = getenv("TASKD_KEEPER") {
            let path = String(cString: named)
            return path.isEmpty ? nil : path
        }
        return RunKeeper.locate(beside: taskd)
    }

    /// The hand-overs of `kept` whose runs `snapshots` (the previous taskd's active runs) describe,
    /// or, for a run started in the last moments before a crash, the snapshot the keeper kept from
    /// its spawn. A run neither describes (a keeper from before it kept snapshots) cannot be taken
    /// over: its processes are killed and the keeper forgets it; the wake it answered runs again.
    static func handOvers(
        _ kept: [RunKeeper.KeptRun], snapshots: [RunSnapshot], cgroups: RunCgroups?, keeper: RunKeeper,
        journal: EventJournal
    ) -> [HandedRun] {
        let known = Dictionary(snapshots.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var handed: [HandedRun] = []
        for run in kept {
            let keptSnapshot = run.snapshot.flatMap {
                try? JSONValueDecoder().decode(RunSnapshot.self, from: String(decoding: $0, as: UTF8.self))
            }
            // The list on disk may be up to 10 ms older than the keeper's copy: the wakes the run
            // answers are those of both.
            var merged = known[run.runID] ?? keptSnapshot
            if let keptSnapshot, let records = merged?.records {
                merged?.records = records + keptSnapshot.records.filter { !records.contains($0) }
            }
            guard let snapshot = merged, run.pipes.count == 3 else {
                if run.waitStatus == nil { kill(-run.pid, SIGKILL) }
                run.pipes.forEach { close($0) }
                keeper.release(run.pid)
                journal.daemon(
                    .runsLost, 4,
                    "run \(run.runID.prefix(8)) (pid \(run.pid)), left by the previous taskd, is not in its list of runs; killed"
                )
                continue
            }
            let path = cgroups.map { $0.root + "/run-" + run.runID }
            let cgroup = path.flatMap { access($0, F_OK) == 0 ? $0 : nil }
            let pipes = zip(run.pipes, [OutputLine.Stream.stdout, .stderr, .notify]).map {
                CommandHandoff.Pipe(fd: $0, stream: $1)
            }
            handed.append(
                HandedRun(
                    run: snapshot,
                    command: CommandHandoff(
                        pid: run.pid, pipes: pipes, cgroup: cgroup, waitStatus: run.waitStatus, kept: true,
                        usage: run.usage.map(CommandHandoff.Usage.init)),
                    killSignal: SIGTERM))
        }
        return handed
    }

    /// Under systemd, with a keeper (`executable`, or one a taskd before this one left), the
    /// keeper is started now and placed in a scope of its own (`KeeperScope`), with the run
    /// cgroups: `placed` then, and the runs outlive the unit. Journaled either way.
    static func place(
        _ keeper: inout RunKeeper?, executable: String?, stateDirectory: String, keeping: Set<String>,
        journal: EventJournal
    ) async -> (placed: Bool, cgroups: RunCgroups?) {
        guard getenv("INVOCATION_ID") != nil, executable != nil || keeper != nil else { return (false, nil) }
        if keeper == nil, let executable {
            switch RunKeeper.start(stateDirectory: stateDirectory, executable: executable) {
            case .success(let started): keeper = started
            case .failure(let error):
                journal.daemon(
                    .stateError, 3, "cannot start the run keeper (\(error.message)): runs will not outlive taskd")
                return (false, nil)
            }
        }
        guard let keeper else { return (false, nil) }
        let (placed, cgroups, why) = await Thread.run { KeeperScope.place(keeper, keeping: keeping) }
        if !placed {
            journal.daemon(.stateError, 4, "the run keeper stays in taskd's unit, so runs end with it: \(why)")
        } else if let cgroups {
            journal.daemon(
                .runCgroups, 6,
                "command runs outlive taskd's unit: each gets a cgroup of its own \(cgroups.summary)",
                [("TASKD_CGROUP", cgroups.root)])
        } else {
            journal.daemon(
                .runCgroups, 5, "command runs outlive taskd's unit, contained by process group, not cgroup: \(why)")
        }
        return (placed, cgroups)
    }
}
