import TaskRuntime
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
    /// Stops watching the run's command, for the next image of taskd (`taskctl upgrade`): what
    /// it needs to take the command over, and the signal that cancels it; nil if none runs here.
    func handOff(_ runID: String) -> (CommandHandoff, killSignal: Int32)?
    /// Takes over a command an earlier image started (`spec`: its task's now, if it still has
    /// one); its progress and end go to `reporter`. Returns why it could not.
    func adopt(
        _ run: Run, _ handoff: CommandHandoff, killSignal: Int32, spec: CommandSpec?, reporter: any RunReporter
    ) -> String?
    /// The run answers one more wake now (it was coalesced into it): the run keeper, which keeps
    /// the run's state for a taskd that starts after a crash, is told.
    func joined(_ run: Run)
    /// The connection to the run keeper, for an upgrade to hand over; nil without one.
    var keeperDescriptor: Int32? { get }
    /// taskd stops and its runs have ended: the run keeper, if any, exits.
    func quitKeeper()
    /// Whether the command runs outlive taskd's unit (the run keeper lives in a scope of its own).
    var runsOutliveUnit: Bool { get }
}

/// What a running handler tells the daemon, from any thread.
package protocol RunReporter: Sendable {
    /// A progress report (`PROGRESS=`/`STATUS=` lines, `reportProgress`); nil: nothing new.
    func progressed(runID: String, _ report: ProgressMailbox.Report?)
    /// The handler ended: how, with what result (JSON text), using what.
    func ended(runID: String, termination: Termination, result: String?, usage: RunUsage?)
}
