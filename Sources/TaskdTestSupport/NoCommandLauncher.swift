import TaskRuntime
import TaskScheduling
import TaskdDaemon

/// A launcher that starts no command: for a daemon whose tasks are all Swift handlers (`TaskdTesting`).
package final class NoCommandLauncher: CommandLauncher {
    package init() {}
    package func start(_ run: Run, _ spec: CommandSpec, reporter: any RunReporter) -> Termination? {
        .spawnFailed("commands do not run here")
    }
    package func signal(_ runID: String, hard: Bool) {}
    package func ended(_ runID: String) {}
    package func joined(_ run: Run) {}
    package func handOff(_ runID: String) -> (CommandHandoff, killSignal: Int32)? { nil }
    package func adopt(
        _ run: Run, _ handoff: CommandHandoff, killSignal: Int32, spec: CommandSpec?, reporter: any RunReporter
    ) -> String? { "commands do not run here" }
    package var keeperDescriptor: Int32? { nil }
    package func quitKeeper() {}
    package var runsOutliveUnit: Bool { false }
}
