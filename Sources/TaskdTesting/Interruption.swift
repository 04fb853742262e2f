/// How `TaskTestDriver.interrupt(_:afterCheckpoint:by:)` cuts a run short, as taskd's own causes do.
public enum Interruption: Sendable, Hashable {
    /// `taskctl cancel`: the run is cancelled (reason `requested`) and not retried.
    case cancel
    /// The system is about to sleep: the run is cancelled (reason `sleep`); it runs again (trigger
    /// `.resume`) once the test calls `systemResumes()`.
    case sleep
    /// The budget runs out: the clock moves to the budget's end, the handler is cancelled and then
    /// abandoned (outcome `.killed`), and the run is retried as `MaxAttempts=` allows.
    case budget
}
