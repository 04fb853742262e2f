@preconcurrency import Dispatch
import TaskScheduling
import TaskdIO

/// Runs Swift handlers as tasks on `HandlerExecutor`: the first slice on the event loop's thread
/// once the event or job that started it returns, the rest on the pool. Cancellation is Swift task
/// cancellation; the hard stop abandons the task (a late return is fenced by the scheduler). Used
/// on the loop only: the daemon holds it (not `Sendable`).
final class SwiftHandlerLauncher {
    private(set) var handlers: [String: TaskHandler]
    private var active: [String: Task<Void, Never>] = [:]

    init(handlers: [String: TaskHandler]) { self.handlers = handlers }

    var isEmpty: Bool { handlers.isEmpty }

    /// Whether a handler is registered for the identifier.
    func has(_ identifier: String) -> Bool { handlers[identifier] != nil }

    /// Starts the handler of `run` at `now`; its end goes to `daemon`. Fails if none is registered.
    func start(_ run: Run, now: ClockReading, daemon: Daemon) -> Termination? {
        guard let handler = handlers[run.key.identifier] else {
            return .spawnFailed("no Swift handler is registered for \(run.key)")
        }
        let controls = SwiftRunControls(daemon: daemon, run: run)
        active[run.id] = Task(executorPreference: HandlerExecutor.shared) { [weak daemon] in
            let (termination, result) = await handler.outcome(of: run, now: now, controls: controls)
            // Posted, not awaited: an await would hop back to this executor only to end the task
            // (one more handler job on the loop, with its stall timer armed and disarmed).
            daemon?.ended(runID: run.id, termination: termination, result: result, usage: nil)
        }
        return nil
    }

    /// Cancels the run's task. Cancelling runs the handler's `onCancel` code on the cancelling
    /// thread, and while it runs the handler's task waits for it too (the runtime's cancellation
    /// lock). So it runs as user code on the loop's thread (`EventLoop.runUserCode`: no other thread
    /// woken, the loop handed on if it lasts), or, when a thread is stuck in user code already, on
    /// `cancelling`: a slow `onCancel` holds up neither the event loop nor a thread of the
    /// two-thread cooperative pool.
    func cancel(_ runID: String) {
        guard let task = active[runID] else { return }
        EventLoop.shared.runUserCode({ task.cancel() }, elsewhere: { body in Self.cancelling.async(execute: body) })
    }

    /// Abandons the run's task at the hard stop: it was cancelled already (a second cancel would
    /// wait on the first, and take another thread, while the handler's onCancel runs).
    func abandon(_ runID: String) { active[runID] = nil }

    /// The run ended: forget it.
    func ended(_ runID: String) { active[runID] = nil }

    /// Cancels Swift handlers when the loop cannot: an overcommitting concurrent queue, whose threads
    /// are outside the cooperative pool and added when one is blocked.
    private static let cancelling = DispatchQueue(label: "taskd.cancel", attributes: .concurrent)
}
