/// How a task has been doing, for alerts, pauses, metrics and `taskctl why`: kept by the scheduler
/// only for tasks that have ended a run, been paused or made a decision worth telling.
public struct TaskHealth: Hashable, Sendable {
    /// The end of its last completed run (CLOCK_REALTIME µs).
    public var lastSuccess: UInt64?
    /// Runs that failed for good (no retry left) since the last completed one.
    public var consecutiveFailures = 0
    /// No completed run for `ExpectSuccessWithinSec=`: the overdue alert was raised.
    public var overdue = false
    /// `AlertAfterFailures=` was reached: the failing alert was raised.
    public var failing = false
    public var pause: TaskPause?
    /// The last trigger refused (a full queue, a different payload): what, by which run, when
    /// (CLOCK_REALTIME µs).
    public var lastRefusal: Decision?

    public struct Decision: Hashable, Sendable {
        public var trigger: Trigger
        public var runID: String
        public var at: UInt64
    }

    public init() {}
}
