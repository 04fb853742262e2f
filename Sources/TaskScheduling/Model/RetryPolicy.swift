/// When a run that did not complete is tried again (`MaxAttempts=`, `RetryBackoffSec=`,
/// `RetryBackoffMaxSec=`, `RetryJitter=`, `RetryPreventExitStatus=`).
public struct RetryPolicy: Hashable, Sendable {
    /// The exit status a command uses to say "do not retry me" (also `$TASKD_NO_RETRY_EXIT_STATUS`).
    public static let noRetryExitStatus: Int32 = 100

    /// Attempts in all, the first included: 1 means no retry.
    public var maxAttempts = 1
    /// The delay before the second attempt; it doubles for each later one.
    public var backoff = TimeSpan.seconds(1)
    /// No delay is longer than this, jitter included.
    public var backoffMax = TimeSpan.seconds(300)
    /// Each delay is drawn from [d·(1 − jitter), d·(1 + jitter)]; 0 ... 1.
    public var jitter = 0.1
    /// Exit statuses after which a command is not retried.
    public var preventExitStatus: [Int32] = [RetryPolicy.noRetryExitStatus]

    public init() {}

    /// True when a run that ended this way may be tried again: it `failed`, `expired` or was
    /// `killed`, and did not ask for no retry. Attempts left are the caller's to check.
    public func allowsRetry(outcome: RunOutcome, termination: Termination?) -> Bool {
        guard [.failed, .expired, .killed].contains(outcome) else { return false }
        switch termination {
        case .exited(let status)?: return !preventExitStatus.contains(status)
        case .threwNoRetry?: return false
        default: return true
        }
    }

    /// Microseconds to wait after attempt `attempt` failed: backoff·2^(attempt−1), jittered by
    /// `unit` (uniform in [0, 1)), capped at `backoffMax`.
    public func delay(after attempt: Int, unit: Double) -> UInt64 {
        let cap = Double(backoffMax.microseconds)
        let base = min(Double(backoff.microseconds) * Double(1 << UInt64(min(max(attempt - 1, 0), 62))), cap)
        let jittered = base * (1 - jitter + 2 * jitter * unit)
        return UInt64(min(max(jittered, 0), cap))
    }
}
