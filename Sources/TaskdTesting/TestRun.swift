import TaskScheduling
import Taskd
import TaskdDaemon

/// One run under `TaskTestDriver`: the run taskd started, followed in the real daemon on the
/// driver's manual clock. Moving the clock through it moves the driver's clock (every run sees it).
public struct TestRun: Sendable {
    /// The run's id (32 hex digits), as in the journal's `TASK_RUN_ID`.
    public let runID: String
    /// The whole budget, and how long before its end cancellation comes.
    public let budget: Duration
    public let cancelGrace: Duration
    /// What started it and which attempt it is.
    public let trigger: TaskTrigger
    public let attempt: Int
    private let driver: TaskTestDriver
    /// When it was triggered, on the driver's clock (monotonic µs): its budget counts from its start.
    private let triggeredAt: UInt64

    init(run: Run, driver: TaskTestDriver) {
        runID = run.id
        budget = .microseconds(Int64(clamping: run.budget.microseconds))
        cancelGrace = .microseconds(Int64(clamping: run.cancelGrace.microseconds))
        trigger = run.trigger
        attempt = run.attempt
        self.driver = driver
        triggeredAt = run.started?.monotonic ?? driver.clock.now().monotonic
    }

    /// When the run started on the driver's clock (monotonic µs): a run that waited starts later.
    private var startedMonotonic: UInt64 { driver.tracker.run(runID)?.started?.monotonic ?? triggeredAt }

    /// When the run started, on the driver's clock as handlers read it: its handler's
    /// `context.deadline` is `startedAt + budget`.
    public var startedAt: ContinuousClock.Instant { driver.clock.instant(atMonotonic: startedMonotonic) }

    /// How long the clock has moved since the run started.
    public var elapsed: Duration {
        let now = driver.clock.now().monotonic
        return .microseconds(Int64(clamping: now > startedMonotonic ? now - startedMonotonic : 0))
    }

    /// The journal entries of the run so far (each entry's fields: `MESSAGE`, `MESSAGE_ID`,
    /// `TASK_OUTCOME`, …), as taskd sends them to journald.
    public var journal: [[String: String]] { driver.journal.filter { $0["TASK_RUN_ID"] == runID } }

    /// Whether the handler runs now (started, not ended).
    public var isRunning: Bool { driver.tracker.run(runID)?.isActive ?? false }

    /// The result once the run has ended, else nil.
    public var result: TestRunResult? {
        guard let run = driver.tracker.run(runID), run.outcome != nil else { return nil }
        return makeResult(run)
    }

    /// Waits for the handler to return (or for the run to end otherwise) and gives the result.
    /// A handler that never returns by itself needs `advanceToBudgetEnd()` first.
    public func finish() async -> TestRunResult {
        let run = await driver.tracker.ended(runID)
        // What the end left for later on the loop (a retry waiting for an abandoned handler, the
        // inhibitor released after a sleep's last run) is done before the test goes on.
        await TaskTestDriver.onLoop {}
        return makeResult(run)
    }

    /// Moves the driver's clock forward by `duration` (see `TaskTestDriver.advance(by:)`):
    /// cancellation is signalled once it passes `budget − cancelGrace` (the handler's `onCancel`
    /// runs before this returns), and at the budget's end a handler still running is abandoned
    /// (outcome `.killed`).
    public func advance(by duration: Duration) async { await driver.advance(by: duration) }

    /// Moves the clock to `budget − cancelGrace` after the run's start, where taskd signals cancellation.
    public func advanceToCancellation() async {
        await advance(by: max(.zero, budget - cancelGrace - elapsed))
    }

    /// Moves the clock to the budget's end, where a handler still running is abandoned.
    public func advanceToBudgetEnd() async {
        await advance(by: max(.zero, budget - elapsed))
    }

    private func makeResult(_ run: Run) -> TestRunResult {
        TestRunResult(
            run: run, journal: journal, retryAfter: driver.tracker.retryAfter(runID),
            nextRunRequested: nextRunRequested(during: run))
    }

    /// The latest next run the handler asked for while it ran (`scheduleNext(after:)`), from the
    /// journal entry taskd makes of it.
    private func nextRunRequested(during run: Run) -> Duration? {
        let entry = driver.recorder.all.last { entry in
            entry.fields["MESSAGE_ID"] == MessageID.runRequested.rawValue
                && entry.fields["TASK"] == run.key.identifier && entry.realtime >= run.scheduledRealtime
        }
        guard let entry, let due = entry.fields["TASK_REQUESTED_USEC"].flatMap(UInt64.init) else { return nil }
        return .microseconds(Int64(clamping: due >= entry.realtime ? due - entry.realtime : 0))
    }
}
