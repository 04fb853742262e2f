import TaskScheduling
import Taskd
import TaskdDaemon

/// Runs the Swift handlers a `TaskDaemon` registers, one run at a time, the way taskd runs them:
/// the real payload decoding and result encoding, the real scheduler deciding outcomes and retries,
/// the real journal entries; time is a manual clock the test moves (no sleeps, no timers).
///
/// ```swift
/// let driver = TaskTestDriver(myDaemon)
/// let run = try await driver.wake("WEATHER_DATA", payloadJSON: #"{"city": "Oslo"}"#)
/// let ended = await run.finish()
/// #expect(ended.outcome == "completed")
/// ```
public struct TaskTestDriver: Sendable {
    private let registrations: [String: TaskRegistration]
    private let problems: [String]

    /// A driver for the Swift tasks `daemon` registers (its configuration folder is not read).
    public init(_ daemon: TaskDaemon) {
        var byName: [String: TaskRegistration] = [:]
        for registration in daemon.registrations { byName[registration.definition.key.identifier] = registration }
        registrations = byName
        problems = daemon.problems
    }

    /// The names of the tasks the daemon registers.
    public var tasks: [String] { registrations.keys.sorted() }

    /// Starts a run of `task` as a wake does: `payloadJSON` is the wake's payload (nil: none), `id`
    /// its `--id`. The handler starts at once; the clock stands at the run's start.
    public func wake(_ task: String, payloadJSON: String? = nil, id: String? = nil) async throws -> TestRun {
        try await start(task, trigger: "wake", attempt: 1, wakeID: id, payloadJSON: payloadJSON)
    }

    /// Starts a run of `task` as `trigger` would (`"wake"`, `"timer"`, `"startup"`, `"retry"`,
    /// `"catchup"`), as attempt `attempt`, with a wake's id and payload if given.
    public func start(
        _ task: String, trigger: String = "wake", attempt: Int = 1, wakeID: String? = nil, payloadJSON: String? = nil
    ) async throws -> TestRun {
        guard problems.isEmpty else { throw TestDriverError.invalidRegistration(problems) }
        guard let registration = registrations[task] else {
            throw TestDriverError.noSuchTask(task, known: tasks)
        }
        guard let kind = Trigger(rawValue: trigger) else {
            throw TestDriverError.invalidTrigger(trigger)
        }
        guard attempt >= 1 else { throw TestDriverError.invalidAttempt(attempt) }
        return await TestRun(
            registration: registration, trigger: kind, attempt: attempt, wakeID: wakeID, payload: payloadJSON)
    }
}
