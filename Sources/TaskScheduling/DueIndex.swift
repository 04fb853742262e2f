/// When each task next needs the scheduler, earliest first: a binary min-heap that knows where
/// every key sits, so setting, moving or removing one key's instant costs O(log n) and the
/// earliest is read in O(1). Ties are broken by key, so the order is deterministic.
struct DueIndex: Sendable, Hashable {
    private var heap: [Entry] = []
    private var position: [TaskKey: Int] = [:]

    struct Entry: Sendable, Hashable {
        var due: UInt64
        var key: TaskKey

        static func < (a: Entry, b: Entry) -> Bool { (a.due, a.key) < (b.due, b.key) }
    }

    /// The earliest instant and its task, or nil when no task has one.
    var first: Entry? { heap.first }

    var count: Int { heap.count }

    /// Records `key`'s instant (nil removes the key).
    mutating func set(_ key: TaskKey, _ due: UInt64?) {
        switch (position[key], due) {
        case (nil, nil):
            return
        case (nil, let due?):
            heap.append(Entry(due: due, key: key))
            position[key] = heap.count - 1
            siftUp(heap.count - 1)
        case (let i?, let due?):
            guard heap[i].due != due else { return }
            heap[i].due = due
            siftUp(i)
            siftDown(position[key]!)
        case (let i?, nil):
            position[key] = nil
            let last = heap.removeLast()
            guard i < heap.count else { return }
            heap[i] = last
            position[last.key] = i
            siftUp(i)
            siftDown(position[last.key]!)
        }
    }

    /// Every key whose instant is at or before `instant`, in key order; O(k log k) for k such keys.
    func due(atOrBefore instant: UInt64) -> [TaskKey] {
        // Most firings find one key, the first: no search (its children are later).
        guard let first = heap.first, first.due <= instant else { return [] }
        if (heap.count < 2 || heap[1].due > instant) && (heap.count < 3 || heap[2].due > instant) { return [first.key] }
        var found: [TaskKey] = []
        var stack = [0]
        while let i = stack.popLast() {
            guard heap[i].due <= instant else { continue }
            found.append(heap[i].key)
            if 2 * i + 1 < heap.count { stack.append(2 * i + 1) }
            if 2 * i + 2 < heap.count { stack.append(2 * i + 2) }
        }
        return found.sorted()
    }

    private mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i] < heap[parent] else { return }
            swapAt(i, parent)
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            var smallest = i
            let left = 2 * i + 1
            let right = left + 1
            if left < heap.count && heap[left] < heap[smallest] { smallest = left }
            if right < heap.count && heap[right] < heap[smallest] { smallest = right }
            guard smallest != i else { return }
            swapAt(i, smallest)
            i = smallest
        }
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        position[heap[a].key] = a
        position[heap[b].key] = b
    }
}
