/// The scheduler's tasks by key, indexed by when each next needs the scheduler (`TaskState.nextDue`):
/// every change made through the subscript re-indexes that task, so finding what is due, and the
/// next deadline, no longer walks every task (10,000 timers cost O(log n) per firing, not O(n)).
/// Each task has a slot, a small integer kept for its life in the table: the slot finds the
/// state's box and the task's place in the due index. A key is found by binary search over the
/// slots in key order (4 bytes a task, where a dictionary of keys to slots took about 60, and the
/// resolver's sorted copy of the keys 32 more). Each state is boxed, copy on write: a dictionary
/// of 800-byte states held inline took 14 MiB of buckets at 10,000 tasks.
package struct TaskTable: Sendable, Hashable {
    /// The slots of the tasks, in key order.
    private var order: [Int32] = []
    /// By slot; a free slot's box holds no state.
    private var boxes: [Box] = []
    private var freeSlots: [Int32] = []
    private var index = DueIndex()

    package init() {}

    /// Makes room for `count` tasks, so that loading them grows no array.
    package mutating func reserveCapacity(_ count: Int) {
        order.reserveCapacity(count)
        boxes.reserveCapacity(count)
        index.reserveCapacity(count)
    }

    package subscript(key: TaskKey) -> TaskState? {
        get { find(key).map { boxes[Int(order[$0])].state } ?? nil }
        _modify {
            // A box shared with a copy of the table is copied first; the state is changed in place.
            // One search finds the slot.
            let place = lowerBound(key)
            let found = place < order.count && self.key(of: order[place]) == key
            let slot: Int32
            if found {
                slot = order[place]
                if !isKnownUniquelyReferenced(&boxes[Int(slot)]) { boxes[Int(slot)] = boxes[Int(slot)].copy() }
            } else {
                slot = freeSlots.popLast() ?? Int32(boxes.count)
                if Int(slot) == boxes.count { boxes.append(Box()) } else { boxes[Int(slot)] = Box() }
            }
            let box = boxes[Int(slot)]
            defer {
                // Read in place: `box.state?.nextDue` and `box.state == nil` copied all of the state.
                let due = box.state?.dueInPlace()
                assert(box.state.map { $0.definition.key == key } ?? true, "a task's state is filed under its key")
                if case .none = box.state {
                    if found { order.remove(at: place) }
                    freeSlots.append(slot)
                } else if !found {
                    order.insert(slot, at: place)
                }
                index.set(slot, due)  // O(1) when the due has not moved
            }
            yield &box.state
        }
    }

    /// The tasks' keys, in key order.
    package var keys: [TaskKey] { order.map(key(of:)) }
    /// The tasks' states, in key order.
    package var values: [TaskState] { order.map { boxes[Int($0)].state! } }
    package var count: Int { order.count }

    /// What `read` takes from each task's state, in key order, read in place: `table[key]` copies
    /// the whole state (a retain of each of its references) and searches for the key. `read` must
    /// not change the state; it is `inout` only so that nothing is copied.
    package func map<T>(inPlace read: (inout TaskState) -> T) -> [T] {
        order.map { read(&boxes[Int($0)].state!) }
    }
    package var isEmpty: Bool { order.isEmpty }

    /// Whether `test` holds for some task's state, read in place, in key order up to the first
    /// that it holds for. `test` must not change the state.
    package func contains(inPlace test: (inout TaskState) -> Bool) -> Bool {
        order.contains { test(&boxes[Int($0)].state!) }
    }

    /// What `read` takes from the task's state, read in place, or nil if the table has no such
    /// task: `table[key]?.field` copies the whole state first. `read` must not change the state.
    package func read<T>(_ key: TaskKey, _ read: (inout TaskState) -> T) -> T? {
        find(key).map { read(&boxes[Int(order[$0])].state!) }
    }

    /// The keys of the tasks whose identifier is `identifier` (one per kind), in key order.
    package func keys(named identifier: String) -> [TaskKey] {
        // Keys order by identifier first: one identifier's tasks sit side by side.
        var found: [TaskKey] = []
        for slot in order[firstPlace(where: { $0.identifier < identifier })...] {
            let next = key(of: slot)
            guard next.identifier == identifier else { break }
            found.append(next)
        }
        return found
    }

    /// The earliest instant any task needs the scheduler (a timer or a retry), and which task (of
    /// tasks due at the same instant, the one that has held its slot longest).
    package var nextDue: (due: UInt64, key: TaskKey)? { index.first.map { ($0.due, key(of: $0.slot)) } }

    /// The instant of `nextDue` alone.
    package var nextDueInstant: UInt64? { index.first?.due }

    /// The tasks due at or before `instant`, in key order.
    func due(atOrBefore instant: UInt64) -> [TaskKey] { index.due(atOrBefore: instant).map(key(of:)).sorted() }

    /// The key of a slot that holds a state (every slot in `order` and in the index does).
    private func key(of slot: Int32) -> TaskKey { boxes[Int(slot)].state!.keyInPlace() }

    /// The first place in `order` whose key is not below `key`.
    private func lowerBound(_ key: TaskKey) -> Int { firstPlace(where: { $0 < key }) }

    /// The first place in `order` whose key `isBelow` rejects (binary search: `isBelow` must hold
    /// for a prefix of the keys in order, and for no key after it).
    private func firstPlace(where isBelow: (TaskKey) -> Bool) -> Int {
        var low = 0
        var high = order.count
        while low < high {
            let middle = (low + high) / 2
            if isBelow(key(of: order[middle])) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The place of `key` in `order`, if the table holds it.
    private func find(_ key: TaskKey) -> Int? {
        let place = lowerBound(key)
        return place < order.count && self.key(of: order[place]) == key ? place : nil
    }

    /// Equal when they hold the same tasks in the same states, whatever slots those have.
    package static func == (a: TaskTable, b: TaskTable) -> Bool {
        a.count == b.count
            && a.order.indices.allSatisfy { a.boxes[Int(a.order[$0])].state == b.boxes[Int(b.order[$0])].state }
    }

    package func hash(into hasher: inout Hasher) {
        // In key order, which is independent of the slots, as `==` is.
        hasher.combine(count)
        for slot in order { hasher.combine(boxes[Int(slot)].state) }
    }

    /// One task's state on the heap, shared by copies of the table until one of them changes it.
    /// Only the table's subscript changes it, and only when the table holds the only reference.
    private final class Box: @unchecked Sendable {
        /// nil in a free slot, and while the subscript adds or removes a task. Unchecked: every
        /// access is the table's own, none overlaps another, and the check was half of each step
        /// of a key's binary search.
        @exclusivity(unchecked) var state: TaskState?

        init() {}

        func copy() -> Box {
            let box = Box()
            box.state = state
            return box
        }
    }
}
