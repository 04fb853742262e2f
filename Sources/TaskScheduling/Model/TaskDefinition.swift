/// Everything the scheduler knows about one task: identity, budget, timers and handler.
/// Its name, calendar and handler are stored inline; every other setting sits in one shared,
/// copy-on-write `TaskOptions` (`SharedValues` stores equal ones once), whose fields read and
/// write as the definition's own properties (`definition.budget`).
@dynamicMemberLookup
public struct TaskDefinition: Hashable, Sendable {
    public var key: TaskKey
    /// `OnCalendar=`: wall-clock elapses (systemd.time(7)); the earliest of them counts.
    public var onCalendar: [CalendarSpec]
    public var handler: HandlerSpec
    @usableFromInline @Indirect var options: TaskOptions

    /// Every `TaskOptions` field, read and written in place as a property of the definition
    /// (`definition.budget`); the first write to shared options copies them (copy on write).
    @inlinable
    public subscript<Value>(dynamicMember path: WritableKeyPath<TaskOptions, Value>) -> Value {
        _read { yield options[keyPath: path] }
        _modify { yield &options[keyPath: path] }
    }

    public init(
        key: TaskKey, description: String = "", budget: TimeSpan? = nil, cancelGrace: TimeSpan? = nil,
        onStartup: [TimeSpan] = [], onUnitActive: [TimeSpan] = [], onCalendar: [CalendarSpec] = [],
        handler: HandlerSpec
    ) {
        self.key = key
        self.options = TaskOptions(
            description: description, budget: budget ?? TaskKind.defaultBudget(for: key.kind),
            cancelGrace: cancelGrace ?? TaskKind.defaultCancelGrace, onStartup: onStartup,
            onUnitActive: onUnitActive)
        self.onCalendar = onCalendar
        self.handler = handler
    }

    /// Offset from a run's start at which cancellation is signalled: `budget − grace`, never negative.
    public var cancelOffset: UInt64 {
        let budget = options.budget.microseconds
        let grace = options.cancelGrace.microseconds
        return budget > grace ? budget - grace : 0
    }
}
