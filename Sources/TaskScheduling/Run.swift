/// One run of a task: what started it, its deadlines, its phase, and (once ended) its outcome.
public struct Run: Hashable, Sendable {
    public var id: String
    public var key: TaskKey
    public var trigger: Trigger
    public var attempt: Int
    public var wakeID: String?
    /// The wake payload as JSON text, handed to the handler (stdin for a command).
    public var payload: String?
    public var started: ClockReading
    public var budget: TimeSpan
    /// Monotonic instant at which cancellation is signalled (`budget − grace` after the start).
    public var cancelAt: UInt64
    /// Monotonic instant of the hard stop; moved earlier by a cancel (its grace) but never later.
    public var killAt: UInt64
    public var phase: RunPhase
    public var outcome: RunOutcome?
    public var termination: Termination?
    public var ended: ClockReading?

    /// `TASKD_DEADLINE_USEC`: the budget's end on CLOCK_REALTIME.
    public var deadlineRealtime: UInt64 { started.realtime &+ budget.microseconds }
    /// Microseconds from start to end, once ended.
    public var duration: UInt64? { ended.map { $0.monotonic - started.monotonic } }
    /// The reason cancellation was signalled, if it was.
    public var cancelReason: CancelReason? {
        switch phase {
        case .running: return nil
        case .cancelling(let r), .killed(let r): return r
        }
    }
    /// `running`, `cancelling`, `killing`, or the outcome once ended.
    public var state: String {
        if let outcome { return outcome.rawValue }
        switch phase {
        case .running: return "running"
        case .cancelling: return "cancelling"
        case .killed: return "killing"
        }
    }
}
