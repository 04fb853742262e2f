/// The scheduler's tasks by key, indexed by when each next needs the scheduler (`TaskState.nextDue`):
/// every change made through the subscript re-indexes that task, so finding what is due, and the
/// next deadline, no longer walks every task (10,000 timers cost O(log n) per firing, not O(n)).
public struct TaskTable: Sendable, Hashable {
    private var states: [TaskKey: TaskState] = [:]
    private var index = DueIndex()

    public init() {}

    public subscript(key: TaskKey) -> TaskState? {
        get { states[key] }
        _modify {
            defer { index.set(key, states[key]?.nextDue) }
            yield &states[key]
        }
    }

    public var keys: Dictionary<TaskKey, TaskState>.Keys { states.keys }
    public var values: Dictionary<TaskKey, TaskState>.Values { states.values }
    public var count: Int { states.count }
    public var isEmpty: Bool { states.isEmpty }

    /// The earliest instant any task needs the scheduler (a timer or a retry), and which task.
    public var nextDue: (due: UInt64, key: TaskKey)? { index.first.map { ($0.due, $0.key) } }

    /// The tasks due at or before `instant`, in key order.
    func due(atOrBefore instant: UInt64) -> [TaskKey] { index.due(atOrBefore: instant) }
}
