/// Stores equal parts of the definitions one configuration load builds once: every task whose
/// `OnCalendar=`, handler or other settings equal another's holds the other's copy (copy on write,
/// so changing one task later copies only that task's part). Kept for one load, then dropped.
public struct SharedValues {
    private var calendars: Set<[CalendarSpec]> = []
    private var handlers: Set<HandlerSpec> = []
    private var options: Set<Indirect<TaskOptions>> = []

    public init() {}

    /// `definition`, its parts replaced by equal ones seen before.
    public mutating func share(_ definition: TaskDefinition) -> TaskDefinition {
        var d = definition
        d.onCalendar = calendars.insert(d.onCalendar).memberAfterInsert
        d.handler = handlers.insert(d.handler).memberAfterInsert
        d.$options = options.insert(d.$options).memberAfterInsert
        return d
    }
}
