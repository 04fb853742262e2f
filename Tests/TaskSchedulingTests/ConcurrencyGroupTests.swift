import Testing

@testable import TaskScheduling

/// `ConcurrencyGroup=`: at most SIZE runs of the group's tasks at a time, across tasks; the others
/// wait their turn in order, holding no slot, never cancelled or skipped for it.
@Suite("Scheduler: concurrency groups")
struct ConcurrencyGroupTests {
    static func member(
        _ name: String, _ group: String, size: Int = 1, _ change: (inout TaskDefinition) -> Void = { _ in }
    )
        -> TaskDefinition
    {
        var d = commandTask(name, kind: "processing", budget: 600)
        d.concurrencyGroup = ConcurrencyGroup(group, size: size)
        change(&d)
        return d
    }

    func key(_ name: String) -> TaskKey { TaskKey(kind: "processing", identifier: name) }

    func started(_ actions: [SchedulerAction]) -> [String] {
        actions.compactMap { if case .start(let run) = $0 { run.key.identifier } else { nil } }
    }

    @Test("NAME and NAME:SIZE parse; anything else does not")
    func parsing() {
        #expect(ConcurrencyGroup(parsing: "db") == ConcurrencyGroup("db", size: 1))
        #expect(ConcurrencyGroup(parsing: "db.backup-2:3") == ConcurrencyGroup("db.backup-2", size: 3))
        for bad in ["", ":2", "db:0", "db:1001", "db:x", "d b", "db:2:3", "db/x"] {
            #expect(ConcurrencyGroup(parsing: bad) == nil, "\(bad)")
        }
        #expect(ConcurrencyGroup("db", size: 2).description == "db:2" && ConcurrencyGroup("db").description == "db")
    }

    @Test("a second run of the group waits its turn, holding no slot, and starts when the first ends")
    func waitsItsTurn() throws {
        let clock = ManualClock()
        var s = Scheduler(
            definitions: [Self.member("a", "db"), Self.member("b", "db"), commandTask("c", kind: "processing")],
            startedAt: clock.now, random: SeededRandom(seed: 1), maxConcurrentRuns: 2)
        let a = try #require(s.wake(key: key("a"), at: clock.now).result?.run)
        let (waiting, actions) = s.wake(key: key("b"), at: clock.now)
        let b = try #require(waiting?.run)
        #expect(actions.trace == ["waiting"] && b.waitingForGroup && b.group == "db")
        #expect(s.activeCount == 1 && s.ready.isEmpty, "it holds no slot")
        // The free slot goes to a task outside the group.
        #expect(started(s.wake(key: key("c"), at: clock.now).actions) == ["c"])
        let why = s.explain(key("b"), at: clock.now)
        let reason = try #require(why.first { $0.code == .waitingForGroup })
        #expect(reason.text.contains("ConcurrencyGroup=db: 1 of 1 place(s) taken (run \(a.id.prefix(8)) of a)"))
        let ended = s.handlerEnded(runID: a.id, termination: .exited(0), at: clock.at(seconds: 1))
        #expect(started(ended) == ["b"])
        #expect(s.runs[b.id]?.started != nil && s.runs[b.id]?.waitingForGroup == false)
    }

    @Test("runs wait in the order they came, across tasks, and a size of 2 lets two run at once")
    func order() throws {
        let clock = ManualClock()
        let names = ["a", "b", "c", "d", "e"]
        var s = Scheduler(
            definitions: names.map { Self.member($0, "db", size: 2) }, startedAt: clock.now,
            random: SeededRandom(seed: 2), maxConcurrentRuns: 8)
        var order: [String] = []
        for name in names { order += started(s.wake(key: key(name), at: clock.now).actions) }
        #expect(order == ["a", "b"] && s.activeCount == 2)
        for step in 0..<3 {
            let first = try #require(
                s.runs.values.filter { $0.started != nil }.min {
                    $0.started!.monotonic < $1.started!.monotonic
                        || ($0.started!.monotonic == $1.started!.monotonic && $0.key < $1.key)
                })
            order += started(
                s.handlerEnded(runID: first.id, termination: .exited(1), at: clock.at(seconds: Double(step + 1))))
        }
        #expect(order == names)
    }

    @Test("a waiting run cancelled leaves the line; one that waits for its conditions holds no place")
    func cancelAndConditions() throws {
        let clock = ManualClock()
        var s = Scheduler(
            definitions: [
                Self.member("a", "db"), Self.member("b", "db"), Self.member("c", "db"),
                Self.member("power", "db") { $0.conditions = [.acPower] },
            ],
            startedAt: clock.now, random: SeededRandom(seed: 3), maxConcurrentRuns: 4)
        _ = s.conditionsChanged(unheld: [.acPower], at: clock.now)
        let power = try #require(s.wake(key: key("power"), at: clock.now).result?.run)
        #expect(!power.waitingFor.isEmpty && power.group == nil, "waiting for AC power, it holds no place")
        let a = try #require(s.wake(key: key("a"), at: clock.now).result?.run)
        #expect(a.started != nil)
        let b = try #require(s.wake(key: key("b"), at: clock.now).result?.run)
        _ = s.wake(key: key("c"), at: clock.now)
        // AC power comes: the power run joins the line, behind b and c.
        #expect(started(s.conditionsChanged(unheld: [], at: clock.now)) == [])
        #expect(s.runs[power.id]?.waitingForGroup == true)
        let (cancelled, actions) = try s.cancel(target: b.id, at: clock.now)
        #expect(cancelled.map(\.id) == [b.id] && actions.trace == ["ended:cancelled"])
        #expect(started(s.handlerEnded(runID: a.id, termination: .exited(0), at: clock.at(seconds: 1))) == ["c"])
        let c = try #require(s.tasks[key("c")]?.currentRunID)
        #expect(started(s.handlerEnded(runID: c, termination: .exited(0), at: clock.at(seconds: 2))) == ["power"])
    }

    @Test("a shutdown ends the runs waiting for a place with the rest, and starts none of them")
    func shutdown() throws {
        let clock = ManualClock()
        var s = Scheduler(
            definitions: [Self.member("a", "db"), Self.member("b", "db")], startedAt: clock.now,
            random: SeededRandom(seed: 4))
        _ = s.wake(key: key("a"), at: clock.now)
        let b = try #require(s.wake(key: key("b"), at: clock.now).result?.run)
        let actions = s.shutdown(at: clock.now)
        #expect(started(actions) == [] && s.runs[b.id] == nil)
    }

    /// 10⁵ random steps (wakes, ends, cancels, conditions coming and going, time passing) over
    /// three groups and tasks outside any: no group ever runs more than its size, no more than
    /// MaxConcurrentRuns= run, no place stays free while a run waits, the line keeps its order, and
    /// once the wakes stop, every run left starts and ends as the runs before it end: none starves.
    @Test("property: a group never exceeds its size, and no waiting run starves")
    func property() throws {
        var clock = ManualClock()
        var rng = SeededRandom(seed: 47)
        var definitions = [
            Self.member("g1a", "g1", size: 2), Self.member("g1b", "g1", size: 2) { $0.overlap = .queue },
            Self.member("g1c", "g1", size: 2) { $0.conditions = [.acPower] },
            Self.member("g2a", "g2") { $0.overlap = .queue }, Self.member("g2b", "g2"),
            Self.member("g3a", "g3", size: 3) { $0.overlap = .replace }, Self.member("g3b", "g3", size: 3),
        ]
        definitions.append(commandTask("free", kind: "processing", budget: 5))
        let sizes = ["g1": 2, "g2": 1, "g3": 3]
        var s = Scheduler(
            definitions: definitions, startedAt: clock.now, random: SeededRandom(seed: 5), maxConcurrentRuns: 4)
        let keys = definitions.map(\.key)
        var seen: Set<String> = []
        var startedIDs: Set<String> = []
        var endedIDs: Set<String> = []
        var waitedEver = 0
        var lines: [String: [String]] = [:]
        func note(_ actions: [SchedulerAction]) {
            for action in actions {
                switch action {
                case .start(let run): startedIDs.insert(run.id)
                case .report(.waiting(let run)) where run.waitingForGroup: waitedEver += 1
                case .report(.ended(let run)): endedIDs.insert(run.id)
                default: break
                }
            }
            seen.formUnion(s.runs.keys)
        }
        func check(_ step: Int) {
            for (name, size) in sizes {
                let running = s.runs.values.filter {
                    $0.started != nil && s.tasks[$0.key]?.definition.concurrencyGroup?.name == name
                }
                #expect(running.count <= size, "step \(step): \(running.count) runs of \(name)")
            }
            #expect(s.activeCount <= 4 && s.activeCount == s.runs.values.filter { $0.started != nil }.count)
            for (name, line) in s.groups.waiting {
                // No place stays free while a run waits for one: the line only moves forward.
                #expect(
                    s.groups.holders[name, default: []].count == sizes[name], "step \(step): a free place in \(name)")
                let before = lines[name, default: []].filter(line.contains)
                #expect(Array(line.prefix(before.count)) == before, "step \(step): the line of \(name) was reordered")
            }
            lines = s.groups.waiting
        }
        var unheld: Set<TaskCondition> = []
        for step in 0..<100_000 {
            let dice = rng.next() % 100
            let active = s.runs.values.filter { $0.started != nil }.sorted { $0.id < $1.id }
            if dice < 40 {
                note(s.wake(key: keys[Int(rng.next() % UInt64(keys.count))], at: clock.now).actions)
            } else if dice < 75, !active.isEmpty {
                let run = active[Int(rng.next() % UInt64(active.count))]
                note(s.handlerEnded(runID: run.id, termination: .exited(Int32(rng.next() % 2)), at: clock.now))
            } else if dice < 82, !s.runs.isEmpty {
                let ids = s.runs.keys.sorted()
                note((try? s.cancel(target: ids[Int(rng.next() % UInt64(ids.count))], at: clock.now))?.actions ?? [])
            } else if dice < 90 {
                unheld = unheld.isEmpty ? [.acPower] : []
                note(s.conditionsChanged(unheld: unheld, at: clock.now))
            } else {
                note(s.advance(to: clock.advance(seconds: Double(rng.next() % 3000) / 1000)))
            }
            check(step)
        }
        // The wakes stop; conditions hold; every run in progress ends, again and again.
        note(s.conditionsChanged(unheld: [], at: clock.now))
        var rounds = 0
        while !s.runs.isEmpty, rounds < 10_000 {
            rounds += 1
            for run in s.runs.values.filter({ $0.started != nil }).sorted(by: { $0.id < $1.id }) {
                note(s.handlerEnded(runID: run.id, termination: .exited(0), at: clock.now))
            }
            note(s.advance(to: clock.advance(seconds: 1)))
            check(100_000 + rounds)
        }
        #expect(waitedEver > 1_000, "\(waitedEver) runs waited for a place")
        #expect(s.runs.isEmpty, "runs left waiting: \(s.runs.values.map { ($0.key.identifier, $0.waitingForGroup) })")
        let starved = seen.filter { !startedIDs.contains($0) && !endedIDs.contains($0) }
        #expect(starved.isEmpty, "\(starved.count) runs neither started nor ended")
        #expect(startedIDs.count > 10_000, "\(startedIDs.count) runs started")
    }
}
