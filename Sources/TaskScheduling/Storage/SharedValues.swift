/// Stores equal parts of the definitions one configuration load builds once: every task whose
/// `OnCalendar=`, argv, command settings or other settings equal another's holds the other's copy (copy on write, so changing one task later copies only that task's part). Kept for
/// one load.
package struct SharedValues {
    private var calendars: Set<[CalendarSpec]> = []
    private var argvs: Set<[String]> = []
    private var execOptions: Set<Indirect<ExecOptions>> = []
    private var options: Set<Indirect<TaskOptions>> = []

    package init() {}

    /// `definition`, its parts replaced by equal ones seen before.
    package mutating func share(_ definition: TaskDefinition) -> TaskDefinition {
        var d = definition
        d.onCalendar = calendars.insert(d.onCalendar).memberAfterInsert
        if case .command(var command) = d.handler {
            command.argv = argvs.insert(command.argv).memberAfterInsert
            command.$options = execOptions.insert(command.$options).memberAfterInsert
            d.handler = .command(command)
        }
        d.$options = options.insert(d.$options).memberAfterInsert
        return d
    }
}
