/// The scheduler's tasks by key, indexed by when each next needs the scheduler (`TaskState.nextDue`):
/// every change made through the subscript re-indexes that task, so finding what is due, and the
/// next deadline, no longer walks every task (10,000 timers cost O(log n) per firing, not O(n)).
/// Each task has a slot, a small integer kept for its life in the table: the key finds the slot
/// (the one dictionary), the slot finds the state's box and the task's place in the due index.
/// Each state is boxed, copy on write: a dictionary of 800-byte states held inline took 14 MiB of
/// buckets at 10,000 tasks.
public struct TaskTable: Sendable, Hashable {
    private var slots: [TaskKey: Int32] = [:]
    /// By slot; a free slot's box holds no state.
    private var boxes: [Box] = []
    private var freeSlots: [Int32] = []
    private var index = DueIndex()

    public init() {}

    public subscript(key: TaskKey) -> TaskState? {
        get { slots[key].flatMap { boxes[Int($0)].state } }
        _modify {
            // A box shared with a copy of the table is copied first; the state is changed in place.
            // One hash of the key finds the slot; the due index is touched only if the due moved.
            let slot: Int32
            if let known = slots[key] {
                slot = known
                if !isKnownUniquelyReferenced(&boxes[Int(slot)]) { boxes[Int(slot)] = boxes[Int(slot)].copy() }
            } else {
                slot = freeSlots.popLast() ?? Int32(boxes.count)
                if Int(slot) == boxes.count { boxes.append(Box()) } else { boxes[Int(slot)] = Box() }
                slots[key] = slot
            }
            let box = boxes[Int(slot)]
            defer {
                // Read in place: `box.state?.nextDue` and `box.state == nil` copied all of the state.
                let due = box.state?.dueInPlace()
                assert(box.state.map { $0.definition.key == key } ?? true, "a task's state is filed under its key")
                if case .none = box.state {
                    slots[key] = nil
                    freeSlots.append(slot)
                }
                if due != box.indexedDue {
                    index.set(slot, due)
                    box.indexedDue = due
                }
            }
            yield &box.state
        }
    }

    public var keys: Dictionary<TaskKey, Int32>.Keys { slots.keys }
    public var values: [TaskState] { slots.values.compactMap { boxes[Int($0)].state } }
    public var count: Int { slots.count }
    public var isEmpty: Bool { slots.isEmpty }

    /// The earliest instant any task needs the scheduler (a timer or a retry), and which task (of
    /// tasks due at the same instant, the one that has held its slot longest).
    public var nextDue: (due: UInt64, key: TaskKey)? { index.first.map { ($0.due, key(of: $0.slot)) } }

    /// The instant of `nextDue` alone.
    public var nextDueInstant: UInt64? { index.first?.due }

    /// The tasks due at or before `instant`, in key order.
    func due(atOrBefore instant: UInt64) -> [TaskKey] { index.due(atOrBefore: instant).map(key(of:)).sorted() }

    /// The key of an indexed slot: only slots that hold a state are in the index.
    private func key(of slot: Int32) -> TaskKey { boxes[Int(slot)].state!.keyInPlace() }

    /// Equal when they hold the same tasks in the same states, whatever slots those have.
    public static func == (a: TaskTable, b: TaskTable) -> Bool {
        a.count == b.count && a.slots.allSatisfy { key, slot in b[key] == a.boxes[Int(slot)].state }
    }

    public func hash(into hasher: inout Hasher) {
        // Independent of the order the slots' dictionary iterates in, as `==` is.
        var entries = 0
        for (key, slot) in slots {
            var one = Hasher()
            one.combine(key)
            one.combine(boxes[Int(slot)].state)
            entries ^= one.finalize()
        }
        hasher.combine(count)
        hasher.combine(entries)
    }

    /// One task's state on the heap, shared by copies of the table until one of them changes it.
    /// Only the table's subscript changes it, and only when the table holds the only reference.
    private final class Box: @unchecked Sendable {
        /// nil in a free slot, and while the subscript adds or removes a task.
        var state: TaskState?
        /// The due the table's index holds for this state (nil: none).
        @PackedInstant var indexedDue: UInt64? = nil

        init() {}

        func copy() -> Box {
            let box = Box()
            box.state = state
            box.indexedDue = indexedDue
            return box
        }
    }
}
