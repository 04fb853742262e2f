/// The scheduler's tasks by key, indexed by when each next needs the scheduler (`TaskState.nextDue`):
/// every change made through the subscript re-indexes that task, so finding what is due, and the
/// next deadline, no longer walks every task (10,000 timers cost O(log n) per firing, not O(n)).
/// Each state is boxed, copy on write: a dictionary of 800-byte states held inline took 14 MiB of
/// buckets at 10,000 tasks.
public struct TaskTable: Sendable, Hashable {
    private var states: [TaskKey: Box] = [:]
    private var index = DueIndex()

    public init() {}

    public subscript(key: TaskKey) -> TaskState? {
        get { states[key]?.state }
        _modify {
            // A box shared with a copy of the table is copied first; the state is changed in place.
            // One hash of the key finds the box; the due index is touched only if the due moved.
            let box: Box
            if let i = states.index(forKey: key) {
                if !isKnownUniquelyReferenced(&states.values[i]) { states.values[i] = states.values[i].copy() }
                box = states.values[i]
            } else {
                box = Box(nil)
                states[key] = box
            }
            defer {
                // Read in place: `box.state?.nextDue` and `box.state == nil` copied all of the state.
                let due = box.state?.dueInPlace()
                if case .none = box.state { states[key] = nil }
                if due != box.indexedDue {
                    index.set(key, due)
                    box.indexedDue = due
                }
            }
            yield &box.state
        }
    }

    public var keys: Dictionary<TaskKey, Box>.Keys { states.keys }
    public var values: [TaskState] { states.values.compactMap(\.state) }
    public var count: Int { states.count }
    public var isEmpty: Bool { states.isEmpty }

    /// The earliest instant any task needs the scheduler (a timer or a retry), and which task.
    public var nextDue: (due: UInt64, key: TaskKey)? { index.first.map { ($0.due, $0.key) } }

    /// The tasks due at or before `instant`, in key order.
    func due(atOrBefore instant: UInt64) -> [TaskKey] { index.due(atOrBefore: instant) }

    /// One task's state on the heap, shared by copies of the table until one of them changes it.
    /// Only the table's subscript changes it, and only when the table holds the only reference.
    public final class Box: Hashable, @unchecked Sendable {
        /// nil only while the subscript removes the task.
        fileprivate(set) var state: TaskState?
        /// The due the table's index holds for this state (nil: none).
        fileprivate var indexedDue: UInt64?

        init(_ state: TaskState?) { self.state = state }

        fileprivate func copy() -> Box {
            let box = Box(state)
            box.indexedDue = indexedDue
            return box
        }

        public static func == (a: Box, b: Box) -> Bool { a === b || a.state == b.state }
        public func hash(into hasher: inout Hasher) { hasher.combine(state) }
    }
}
