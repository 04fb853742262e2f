/// A task paused (`taskctl pause`, `PauseAfterFailures=`): its timers and wakes are recorded but
/// not run until it is resumed or the pause ends. Kept across restarts.
public struct TaskPause: Hashable, Sendable {
    /// When it was paused (CLOCK_REALTIME µs).
    public var since: UInt64
    /// When it resumes by itself (CLOCK_REALTIME µs); nil: when resumed.
    public var until: UInt64?
    /// `--note`, or why taskd paused it (`PauseAfterFailures=3: 3 failures in a row`).
    public var note: String

    public init(since: UInt64, until: UInt64? = nil, note: String = "") {
        self.since = since
        self.until = until
        self.note = note
    }
}
