import Synchronization
import TaskScheduling
import TaskdDaemon

/// One run of a Swift handler under `TaskTestDriver`, on a manual clock that starts at the run's
/// start and moves only when the test moves it. The handler runs as a real Swift task; when it
/// returns, the run ends at the clock's current reading, as the real scheduler decides.
public actor TestRun {
    /// The run's id (32 hex digits), as in the journal's `TASK_RUN_ID`.
    public nonisolated let runID: String
    /// The whole budget, and how long before its end cancellation comes.
    public nonisolated let budget: Duration
    public nonisolated let cancelGrace: Duration

    private var scheduler: Scheduler
    private let handler: TaskHandler
    private let startedAt: ClockReading
    private var now: ClockReading
    private var handlerTask: Task<Void, Never>?
    private var entries: [[String: String]] = []
    private var ended: TestRunResult?
    private var retryAfter: Duration?
    /// The next run the handler asked for (`scheduleNext(after:)`), the latest request.
    private let controls = Controls()

    /// What the handler reports and asks, kept for the test: the latest request, and the latest
    /// progress, applied when the clock moves and when the handler returns.
    private final class Controls: RunControls {
        let requested = Mutex<Duration?>(nil)
        let mailbox = ProgressMailbox()
        func scheduleNext(_ delay: Duration) { requested.withLock { $0 = delay } }
        func progress(completed: Int64, total: Int64?) {
            _ = mailbox.post { ($0.completed, $0.total) = (completed, total) }
        }
        func status(_ text: String) { _ = mailbox.post { $0.status = text } }
    }
    private var waiting: [CheckedContinuation<TestRunResult, Never>] = []

    init(registration: TaskRegistration, trigger: Trigger, attempt: Int, wakeID: String?, payload: String?) async {
        // The run alone: the task's own timers are not this test's business.
        var definition = registration.definition
        definition.onStartup = []
        definition.onUnitActive = []
        definition.onUnitInactive = []
        definition.onCalendar = []
        // Any instants do: the test sees durations from the run's start, never these.
        let start = ClockReading(monotonic: 1_000_000_000, realtime: 1_767_225_600_000_000)
        var scheduler = Scheduler(definitions: [definition], startedAt: start, maxConcurrentRuns: 1)
        let (result, actions) = scheduler.trigger(
            definition.key, trigger, attempt: attempt, wakeID: wakeID, payload: payload, at: start)
        self.scheduler = scheduler
        self.handler = registration.handler
        self.startedAt = start
        self.now = start
        self.runID = result?.run.id ?? ""
        self.budget = .microseconds(Int64(clamping: definition.budget.microseconds))
        self.cancelGrace = .microseconds(Int64(clamping: definition.cancelGrace.microseconds))
        perform(actions)
    }

    /// How long the clock has moved since the run started.
    public var elapsed: Duration { .microseconds(Int64(clamping: now.monotonic - startedAt.monotonic)) }

    /// The journal entries of the run so far (each entry's fields: `MESSAGE`, `MESSAGE_ID`,
    /// `TASK_OUTCOME`, …), as taskd would send them to journald.
    public var journal: [[String: String]] { entries }

    /// The result once the run has ended, else nil.
    public var result: TestRunResult? { ended }

    /// Waits for the handler to return (or for the run to end otherwise) and gives the result.
    /// A handler that never returns by itself needs `advanceToBudgetEnd()` first.
    public func finish() async -> TestRunResult {
        if let ended { return ended }
        return await withCheckedContinuation { waiting.append($0) }
    }

    /// Moves the clock forward by `duration`: cancellation is signalled once it passes
    /// `budget − cancelGrace` (the handler's `onCancel` runs before this returns), and at the
    /// budget's end a handler still running is abandoned (outcome `killed`).
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let micros = UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000
        applyProgress()
        now = ClockReading(monotonic: now.monotonic &+ micros, realtime: now.realtime &+ micros)
        perform(scheduler.advance(to: now))
    }

    /// Moves the clock to `budget − cancelGrace`, where taskd signals cancellation.
    public func advanceToCancellation() {
        advance(by: max(.zero, budget - cancelGrace - elapsed))
    }

    /// Moves the clock to the budget's end, where a handler still running is abandoned.
    public func advanceToBudgetEnd() {
        advance(by: max(.zero, budget - elapsed))
    }

    private func handlerReturned(_ termination: Termination, _ result: String?) {
        applyProgress()
        perform(scheduler.handlerEnded(runID: runID, termination: termination, result: result, at: now))
    }

    /// Hands the handler's latest progress report to the scheduler, at the clock's reading.
    private func applyProgress() {
        guard let report = controls.mailbox.take() else { return }
        perform(
            scheduler.progress(
                runID: runID, completed: report.completed, total: report.total, status: report.status, at: now))
    }

    private func perform(_ actions: [SchedulerAction]) {
        for action in actions {
            switch action {
            case .start(let run):
                let handler = self.handler
                let now = self.now
                let controls = self.controls
                handlerTask = Task {
                    let (termination, result) = await handler.outcome(of: run, now: now, controls: controls)
                    self.handlerReturned(termination, result)
                }
            case .cancel:
                handlerTask?.cancel()
            case .kill:
                handlerTask = nil  // abandoned, as taskd does: a late return is ignored
            case .report(let event):
                let entry = EventJournal.entry(for: event)
                entries.append(Dictionary(entry.fields.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }))
                if case .retryScheduled(let run, let delay) = event, run.id == runID {
                    retryAfter = .microseconds(Int64(clamping: delay))
                    ended?.retryAfter = retryAfter
                }
                if case .ended(let run) = event, run.id == runID {
                    ended = TestRunResult(
                        run: run, journal: entries, retryAfter: retryAfter,
                        nextRunRequested: controls.requested.withLock { $0 })
                }
            case .persistTrigger, .persistRequest, .persistHealth, .settle, .alert:
                break
            }
        }
        if let ended, !waiting.isEmpty {
            waiting.forEach { $0.resume(returning: ended) }
            waiting.removeAll()
        }
    }

}
