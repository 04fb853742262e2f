import Synchronization
import TaskRuntime
import TaskScheduling

@testable import TaskdDaemon

/// A `CommandLauncher` that starts nothing: it records the runs the daemon starts and the signals
/// it sends them, and lets a test wait for a signal. A run ends when the test says so (through the
/// daemon's `RunReporter` side, as a real process's exit would be reported).
final class RecordingLauncher: CommandLauncher {
    /// A signal the daemon sent a run: cancellation, or the hard stop (`hard`).
    struct Signal: Hashable, Sendable {
        var runID: String
        var hard: Bool
    }

    private struct State {
        var started: [Run] = []
        var specs: [String: CommandSpec] = [:]
        var signals: [Signal] = []
        var ended: [String] = []
        var joined: [Run] = []
        var failing: Set<String> = []
        var waiting: [String: [CheckedContinuation<Signal, Never>]] = [:]
    }

    private let state = Mutex(State())

    func start(_ run: Run, _ spec: CommandSpec, reporter: any RunReporter) -> Termination? {
        state.withLock { s in
            s.started.append(run)
            s.specs[run.id] = spec
            return s.failing.contains(run.key.identifier) ? .spawnFailed("refused by the test") : nil
        }
    }

    func signal(_ runID: String, hard: Bool) {
        let signal = Signal(runID: runID, hard: hard)
        let waiters = state.withLock { s in
            s.signals.append(signal)
            return s.waiting.removeValue(forKey: runID) ?? []
        }
        for waiter in waiters { waiter.resume(returning: signal) }
    }

    func ended(_ runID: String) { state.withLock { $0.ended.append(runID) } }
    func joined(_ run: Run) { state.withLock { $0.joined.append(run) } }
    func handOff(_ runID: String) -> (CommandHandoff, killSignal: Int32)? { nil }
    func adopt(
        _ run: Run, _ handoff: CommandHandoff, killSignal: Int32, spec: CommandSpec?, reporter: any RunReporter
    ) -> String? { "not here" }

    /// Every run started so far, in order, as it was when it started.
    var started: [Run] { state.withLock { $0.started } }

    /// The command each run was started with, by run id.
    var specs: [String: CommandSpec] { state.withLock { $0.specs } }

    /// Every signal sent so far, in order.
    var signals: [Signal] { state.withLock { $0.signals } }

    /// The runs the daemon said ended (and forgot), in order.
    var ended: [String] { state.withLock { $0.ended } }
    /// The runs it was told a wake joined, as they were then.
    var joined: [Run] { state.withLock { $0.joined } }

    /// Makes the starts of `task`'s runs fail, as a missing executable would.
    func failStarts(of task: String) { state.withLock { _ = $0.failing.insert(task) } }

    /// Returns the first signal sent to `runID`, waiting for it if none was sent yet.
    func firstSignal(to runID: String) async -> Signal {
        await withCheckedContinuation { continuation in
            let sent = state.withLock { s -> Signal? in
                if let sent = s.signals.first(where: { $0.runID == runID }) { return sent }
                s.waiting[runID, default: []].append(continuation)
                return nil
            }
            if let sent { continuation.resume(returning: sent) }
        }
    }
    var keeperDescriptor: Int32? { nil }
    func quitKeeper() {}
    var runsOutliveUnit: Bool { false }
}
