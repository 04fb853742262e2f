import TaskScheduling

/// Starts and signals the commands of command runs: `ProcessLauncher` in taskd (real processes,
/// a cgroup each), a recording one in the daemon's unit tests, none in `TaskdTesting`. Used from
/// the event loop only.
package protocol CommandLauncher: AnyObject, Sendable {
    /// Starts `run`'s command; its progress and end go to `reporter`. Returns why it could not start.
    func start(_ run: Run, _ spec: CommandSpec, reporter: any RunReporter) -> Termination?
    /// Sends the run's `KillSignal=` to its processes (cancellation), or SIGKILL with `hard`.
    func signal(_ runID: String, hard: Bool)
    /// The run ended: forget it.
    func ended(_ runID: String)
}

/// What a running handler tells the daemon, from any thread.
package protocol RunReporter: Sendable {
    /// A progress report (`PROGRESS=`/`STATUS=` lines, `reportProgress`); nil: nothing new.
    func progressed(runID: String, _ report: ProgressMailbox.Report?)
    /// The handler ended: how, with what result (JSON text), using what.
    func ended(runID: String, termination: Termination, result: String?, usage: RunUsage?)
}

/// A launcher that starts no command: for a daemon whose tasks are all Swift handlers (`TaskdTesting`).
package final class NoCommandLauncher: CommandLauncher {
    package init() {}
    package func start(_ run: Run, _ spec: CommandSpec, reporter: any RunReporter) -> Termination? {
        .spawnFailed("commands do not run here")
    }
    package func signal(_ runID: String, hard: Bool) {}
    package func ended(_ runID: String) {}
}
