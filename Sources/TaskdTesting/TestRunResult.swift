import TaskScheduling
import Taskd
import TaskdProtocol

/// How a `TestRun` ended: its outcome as taskd records it, what the handler returned, and what
/// was journaled.
public struct TestRunResult: Sendable {
    /// `.completed`, `.failed`, `.cancelled`, `.expired` or `.killed` (docs/run-life.md).
    public var outcome: RunOutcome
    /// What the handler returned, as the JSON text taskd keeps with the run (nil: no result type,
    /// or it did not return).
    public var resultJSON: String?
    /// Why the run failed: the error it threw (`threw …`, `threw PermanentFailure: …`).
    public var error: String?
    /// True when the handler returned by itself after cancellation came: done partially, and
    /// taskd does not retry it.
    public var partial: Bool
    /// Why cancellation came (`.budget`, `.sleep`, …), if it came.
    public var cancelReason: CancelReason?
    /// How long the run took on the test's clock.
    public var duration: Duration
    /// When taskd would start the next attempt, if the failure is retried (`maxAttempts:`).
    public var retryAfter: Duration?
    /// What the handler last reported: units done, of how many, and its status.
    public var progressCompleted: Int?
    public var progressTotal: Int?
    public var status: String?
    /// The next run the handler asked for (`context.scheduleNext(after:)`), if it did.
    public var nextRunRequested: Duration?
    /// The run's journal entries, in order, the last one its end.
    public var journal: [[String: String]]

    init(run: Run, journal: [[String: String]], retryAfter: UInt64?, nextRunRequested: Duration?) {
        self.nextRunRequested = nextRunRequested
        progressCompleted = run.progress?.completed.map { Int($0) }
        progressTotal = run.progress?.total.map { Int($0) }
        status = run.progress?.status
        outcome = run.outcome ?? .cancelled
        resultJSON = run.result
        switch run.termination {
        case .threw(let e)?: error = "threw \(e)"
        case .threwNoRetry(let e)?: error = "threw PermanentFailure: \(e)"
        default: error = nil
        }
        cancelReason = run.cancelReason
        partial = run.partial
        duration = .microseconds(Int64(clamping: run.duration ?? 0))
        self.retryAfter = retryAfter.map { .microseconds(Int64(clamping: $0)) }
        self.journal = journal
    }

    /// The result decoded as `R`, as a client reading `taskctl status --json` would.
    public func result<R: Decodable>(as type: R.Type) throws -> R? {
        guard let resultJSON else { return nil }
        return try JSONValueDecoder().decode(R.self, from: resultJSON)
    }
}
