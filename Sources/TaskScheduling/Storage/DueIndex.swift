/// When each slot's task next needs the scheduler, earliest first: a binary min-heap of (instant,
/// slot) that knows where every slot sits, so setting, moving or removing one slot's instant costs
/// O(log n) and the earliest is read in O(1). Ties are broken by slot, so the order is
/// deterministic. 20 bytes per task (a heap entry and a position), where keying it by `TaskKey`
/// took about 130 (a dictionary of positions and the key in every entry).
struct DueIndex: Sendable {
    private var heap: [Entry] = []
    /// Each slot's place in `heap` (-1: none), indexed by slot.
    private var position: [Int32] = []

    struct Entry: Sendable, Equatable {
        var due: UInt64
        var slot: Int32

        static func < (a: Entry, b: Entry) -> Bool { a.due != b.due ? a.due < b.due : a.slot < b.slot }
    }

    /// Makes room for `count` slots.
    mutating func reserveCapacity(_ count: Int) {
        heap.reserveCapacity(count)
        position.reserveCapacity(count)
    }

    /// The earliest instant and its slot, or nil when no slot has one.
    var first: Entry? { heap.first }

    var count: Int { heap.count }

    /// Records `slot`'s instant (nil removes it). Slots are small non-negative integers.
    mutating func set(_ slot: Int32, _ due: UInt64?) {
        let s = Int(slot)
        if s >= position.count { position += repeatElement(-1, count: s + 1 - position.count) }
        switch (position[s], due) {
        case (-1, nil):
            return
        case (-1, let due?):
            heap.append(Entry(due: due, slot: slot))
            position[s] = Int32(heap.count - 1)
            siftUp(heap.count - 1)
        case (let i, let due?):
            guard heap[Int(i)].due != due else { return }
            heap[Int(i)].due = due
            siftUp(Int(i))
            siftDown(Int(position[s]))
        case (let i, nil):
            position[s] = -1
            let last = heap.removeLast()
            guard Int(i) < heap.count else { return }
            heap[Int(i)] = last
            position[Int(last.slot)] = i
            siftUp(Int(i))
            siftDown(Int(position[Int(last.slot)]))
        }
    }

    /// Every slot whose instant is at or before `instant`, in no particular order; O(k) for k such slots.
    func due(atOrBefore instant: UInt64) -> [Int32] {
        // Most firings find one slot, the first: no search (its children are later).
        guard let first = heap.first, first.due <= instant else { return [] }
        if (heap.count < 2 || heap[1].due > instant) && (heap.count < 3 || heap[2].due > instant) {
            return [first.slot]
        }
        var found: [Int32] = []
        var stack = [0]
        while let i = stack.popLast() {
            guard heap[i].due <= instant else { continue }
            found.append(heap[i].slot)
            if 2 * i + 1 < heap.count { stack.append(2 * i + 1) }
            if 2 * i + 2 < heap.count { stack.append(2 * i + 2) }
        }
        return found
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
        position[Int(heap[a].slot)] = Int32(a)
        position[Int(heap[b].slot)] = Int32(b)
    }
}
