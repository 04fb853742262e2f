import Testing

@testable import TaskScheduling

@Suite("DueIndex and TaskTable: the index of when each task is next due")
struct DueIndexTests {
    /// The index against a plain dictionary through 20,000 random sets, moves and removals.
    @Test("matches a brute-force model through random changes")
    func matchesModel() {
        var random = SeededRandom(seed: 7)
        var index = DueIndex()
        var model: [TaskKey: UInt64] = [:]
        let keys = (0..<300).map { TaskKey(kind: "k\($0 % 3)", identifier: "t\($0)") }
        for step in 0..<20_000 {
            let key = keys[Int(random.next(upperBound: UInt64(keys.count)))]
            // Few distinct instants, so ties (broken by key) are common.
            let due: UInt64? = random.next(upperBound: UInt64(5)) == 0 ? nil : random.next(upperBound: UInt64(50))
            index.set(key, due)
            model[key] = due
            #expect(index.count == model.count)
            let expectedFirst = model.min { ($0.value, $0.key) < ($1.value, $1.key) }
            #expect(index.first?.key == expectedFirst?.key && index.first?.due == expectedFirst?.value)
            if step % 100 == 0 {
                let instant = random.next(upperBound: UInt64(50))
                #expect(index.due(atOrBefore: instant) == model.filter { $0.value <= instant }.keys.sorted())
            }
        }
    }

    /// Small heaps, queried at every instant: the one-key answer (only the first is due) and the
    /// search agree with the model, including first's children due at the same instant.
    @Test("due(atOrBefore:) on heaps of 0 to 6 keys, at every instant")
    func dueOnSmallHeaps() {
        var random = SeededRandom(seed: 11)
        let keys = (0..<6).map { TaskKey(kind: "appRefresh", identifier: "s\($0)") }
        for _ in 0..<500 {
            var index = DueIndex()
            var model: [TaskKey: UInt64] = [:]
            for key in keys.prefix(Int(random.next(upperBound: UInt64(7)))) {
                let due = random.next(upperBound: UInt64(8))
                index.set(key, due)
                model[key] = due
            }
            for instant in UInt64(0)..<9 {
                #expect(index.due(atOrBefore: instant) == model.filter { $0.value <= instant }.keys.sorted())
            }
        }
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
