/// A task whose timer `Scheduler.fire(at:)` fired, waiting for `Scheduler.rearmFired(at:)`.
struct FiredTimer: Hashable, Sendable {
    var key: TaskKey
    /// The instant the calendar searches after, if an `OnCalendar=` elapse was among those that fired.
    var calendarAfter: UInt64?
}
