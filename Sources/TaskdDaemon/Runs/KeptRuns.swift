import TaskRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// The command runs a taskd before this one left with the run keeper (it crashed, was killed or
/// restarted), made into hand-overs for `Daemon.adopt`, as an upgrade's are.
enum KeptRuns {
    /// The keeper's executable: `TASKD_KEEPER` if set (empty: no keeper, runs end with taskd),
    /// else `taskd-keeper` beside taskd or in `../libexec/taskd/`.
    static func executable(beside taskd: String) -> String? {
        if let named = getenv("TASKD_KEEPER") {
            let path = String(cString: named)
            return path.isEmpty ? nil : path
        }
        return RunKeeper.locate(beside: taskd)
    }

    /// The hand-overs of `kept` whose runs `snapshots` (the previous taskd's active runs) describe.
    /// A run it does not describe (started in the last moments before a crash) cannot be taken
    /// over: its processes are killed and the keeper forgets it; the wake it answered runs again.
    static func handOvers(
        _ kept: [RunKeeper.KeptRun], snapshots: [RunSnapshot], cgroups: RunCgroups?, keeper: RunKeeper,
        journal: EventJournal
    ) -> [HandedRun] {
        let known = Dictionary(snapshots.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var handed: [HandedRun] = []
        for run in kept {
            guard let snapshot = known[run.runID], run.pipes.count == 3 else {
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
}
