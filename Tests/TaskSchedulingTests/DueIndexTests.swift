import Testing

@testable import TaskScheduling

@Suite("DueIndex and TaskTable: the index of when each task is next due")
struct DueIndexTests {
    /// The index against a plain dictionary through 20,000 random sets, moves and removals.
    @Test("matches a brute-force model through random changes")
    func matchesModel() {
        var random = SeededRandom(seed: 7)
        var index = DueIndex()
        var model: [Int32: UInt64] = [:]
        for step in 0..<20_000 {
            let slot = Int32(random.next(upperBound: UInt64(300)))
            // Few distinct instants, so ties (broken by slot) are common.
            let due: UInt64? = random.next(upperBound: UInt64(5)) == 0 ? nil : random.next(upperBound: UInt64(50))
            index.set(slot, due)
            model[slot] = due
            #expect(index.count == model.count)
            let expectedFirst = model.min { ($0.value, $0.key) < ($1.value, $1.key) }
            #expect(index.first?.slot == expectedFirst?.key && index.first?.due == expectedFirst?.value)
            if step % 100 == 0 {
                let instant = random.next(upperBound: UInt64(50))
                #expect(index.due(atOrBefore: instant).sorted() == model.filter { $0.value <= instant }.keys.sorted())
            }
        }
    }

    /// Small heaps, queried at every instant: the one-slot answer (only the first is due) and the
    /// search agree with the model, including first's children due at the same instant.
    @Test("due(atOrBefore:) on heaps of 0 to 6 slots, at every instant")
    func dueOnSmallHeaps() {
        var random = SeededRandom(seed: 11)
        for _ in 0..<500 {
            var index = DueIndex()
            var model: [Int32: UInt64] = [:]
            for slot in Int32(0)..<Int32(random.next(upperBound: UInt64(7))) {
                let due = random.next(upperBound: UInt64(8))
                index.set(slot, due)
                model[slot] = due
            }
            for instant in UInt64(0)..<9 {
                #expect(index.due(atOrBefore: instant).sorted() == model.filter { $0.value <= instant }.keys.sorted())
            }
        }
    }

    /// The table against a dictionary of states through random adds, changes and removals: its
    /// slots are freed and used again, and every look-up, count, key order and due answer agrees
    /// with the model. Names are shared by two kinds, as the binary search by name must find both.
    @Test("TaskTable matches a dictionary through random adds, changes and removals (slots reused)")
    func tableMatchesModel() {
        var random = SeededRandom(seed: 5)
        let start = ManualClock().now
        var table = TaskTable()
        var model: [TaskKey: TaskState] = [:]
        let names = (0..<40).map { "t\($0)" }
        for step in 0..<4_000 {
            let name = names[Int(random.next(upperBound: UInt64(names.count)))]
            let kind = random.next(upperBound: UInt64(2)) == 0 ? "processing" : "appRefresh"
            let key = TaskKey(kind: kind, identifier: name)
            switch random.next(upperBound: UInt64(3)) {
            case 0:
                table[key] = nil
                model[key] = nil
            case 1:
                let state = TaskState(
                    definition: commandTask(name, kind: kind, onStartup: [random.next(upperBound: UInt64(20))]),
                    daemonStart: start)
                table[key] = state
                model[key] = state
            default:
                let due = start.monotonic + random.next(upperBound: UInt64(20)) * 1_000_000
                table[key]?.pendingStartup = [due]
                model[key]?.pendingStartup = [due]
            }
            #expect(table.count == model.count && table.keys == model.keys.sorted())
            #expect(table.keys(named: name) == model.keys.filter { $0.identifier == name }.sorted())
            #expect(table[key] == model[key])
            let first = model.values.compactMap(\.nextDue).min()
            #expect(table.nextDue?.due == first)
            if let next = table.nextDue { #expect(model[next.key]?.nextDue == next.due) }
            if step % 50 == 0 {
                let instant = start.monotonic + random.next(upperBound: UInt64(20)) * 1_000_000
                let due = model.filter { ($0.value.nextDue ?? .max) <= instant }.keys.sorted()
                #expect(table.due(atOrBefore: instant) == due)
            }
        }
    }

    @Test("tables holding the same states are equal and hash alike, whatever their slots")
    func equalitySlotIndependent() {
        let start = ManualClock().now
        let (a, b) = (Self.a, Self.b)
        let stateA = TaskState(definition: commandTask("a", onStartup: [10]), daemonStart: start)
        let stateB = TaskState(definition: commandTask("b", onStartup: [5]), daemonStart: start)
        var one = TaskTable()
        one[a] = stateA
        one[b] = stateB
        var other = TaskTable()
        other[b] = stateB
        other[a] = stateA
        #expect(one == other && one.hashValue == other.hashValue)
        other[a]!.queue.append("r1")
        #expect(one != other)
    }

    static let a = TaskKey(kind: "appRefresh", identifier: "a")
    static let b = TaskKey(kind: "appRefresh", identifier: "b")

    /// A scheduler with tasks a and b, due 10 s and 5 s after `start`.
    static func twoTasks(_ start: ClockReading) -> Scheduler {
        Scheduler(
            definitions: [commandTask("a", onStartup: [10]), commandTask("b", onStartup: [5])], startedAt: start,
            random: SeededRandom(seed: 1))
    }

    @Test("changes through the table's subscript re-index the task; removal drops it")
    func tableReindexes() {
        let start = ManualClock().now
        var s = Self.twoTasks(start)
        let (a, b) = (Self.a, Self.b)
        #expect(s.tasks.nextDue?.key == b)
        #expect(s.nextDeadline == start.monotonic + 5_000_000)
        s.tasks[b]!.pendingStartup = [start.monotonic + 20_000_000]
        #expect(s.tasks.nextDue?.key == a)
        #expect(s.tasks.due(atOrBefore: start.monotonic + 20_000_000) == [a, b])
        s.tasks[a] = nil
        #expect(s.tasks.nextDue?.key == b)
        #expect(s.tasks.count == 1)
    }

    @Test("a copy of the table keeps its states when the original changes (boxes are copied on write)")
    func copyOnWrite() {
        var s = Self.twoTasks(ManualClock().now)
        let (a, b) = (Self.a, Self.b)
        let before = s.tasks
        s.tasks[a]!.queue.append("r1")
        s.tasks[b] = nil
        #expect(before[a]?.queue == [] && before[b] != nil && before.count == 2)
        #expect(s.tasks[a]?.queue == ["r1"] && s.tasks[b] == nil && s.tasks.count == 1)
        #expect(before != s.tasks)
        var copy = s.tasks
        #expect(copy == s.tasks)
        copy[a]!.queue.append("r2")
        #expect(s.tasks[a]?.queue == ["r1"] && copy[a]?.queue == ["r1", "r2"])
        #expect(before.nextDue?.key == b && s.tasks.nextDue?.key == a)
    }

    /// 10,000 timers fire once each, in time order, each at its own instant.
    @Test("10,000 start-up timers each fire once, at their instant, in order")
    func manyTimers() {
        var clock = ManualClock()
        let count = 10_000
        let definitions = (0..<count).map { commandTask("t\($0)", kind: "processing", onStartup: [UInt64($0 + 1)]) }
        var s = Scheduler(
            definitions: definitions, startedAt: clock.now, random: SeededRandom(seed: 3), maxConcurrentRuns: count)
        var fired: [String] = []
        while let next = s.nextDeadline {
            let now = clock.advance(seconds: Double(next - clock.now.monotonic) / 1_000_000)
            for case .start(let run) in s.advance(to: now) {
                #expect(run.trigger == .startup)
                fired.append(run.key.identifier)
                _ = s.handlerEnded(runID: run.id, termination: .exited(0), at: now)
            }
        }
        #expect(fired == (0..<count).map { "t\($0)" })
    }
}
