import Testing

@testable import TaskScheduling

/// `add` and `remove`: one task in or out of the table, as a reload that changes that task alone
/// would do it, without touching the others (manual clock).
@Suite("add and remove one task, as a reload of it would (manual clock)")
struct AddRemoveTests {
    let clock = ManualClock()

    /// `Overlap=allow` with two runs in progress and one queued (`a`), an interval timer with a
    /// random delay (`b`), a group of size 1 that one run holds and one waits for (`g1`, `g2`),
    /// and a task watched for overdue, alone in its group (`h`).
    func world() throws -> (Scheduler, [TaskDefinition]) {
        var a = policyTask("a", overlap: .allow, queueLimit: 4, maxAttempts: 2)
        a.maxInstances = 2
        var b = commandTask("b", kind: "processing", onUnitActive: [60])
        b.randomizedDelay = .seconds(30)
        var g1 = policyTask("g1")
        g1.concurrencyGroup = ConcurrencyGroup("g")
        var g2 = policyTask("g2")
        g2.concurrencyGroup = ConcurrencyGroup("g")
        var h = commandTask("h")
        h.expectSuccessWithin = .seconds(3600)
        h.concurrencyGroup = ConcurrencyGroup("solo", size: 2)
        let definitions = [a, b, g1, g2, h]
        var s = Scheduler(definitions: definitions, startedAt: clock.now, random: SeededRandom(seed: 5))
        for (name, record) in [("a", "a1"), ("a", "a2"), ("a", "a3"), ("g1", "g1"), ("g2", "g2"), ("b", "b")] {
            _ = s.wakeOne(name, record: record, at: clock.now)
        }
        return (s, definitions)
    }

    /// A new task: a calendar every hour at :30 with a random delay, in group `g`, watched for overdue.
    func newTask() throws -> TaskDefinition {
        var d = policyTask("n")
        d.onCalendar = [try CalendarSpec(parsing: "*-*-* *:30:00 UTC")]
        d.randomizedDelay = .seconds(10)
        d.concurrencyGroup = ConcurrencyGroup("g")
        d.expectSuccessWithin = .seconds(7200)
        return d
    }

    /// What the two schedulers show: the same tasks, runs, deadlines, groups, health, answers to
    /// `why` and to targets.
    func expectSame(_ x: Scheduler, _ y: Scheduler, at now: ClockReading, _ note: String) {
        #expect(x.tasks == y.tasks, "tasks \(note)")
        #expect(x.runs == y.runs && x.ready == y.ready && x.deferred == y.deferred, "runs \(note)")
        #expect(x.nextDeadline == y.nextDeadline, "next deadline \(note)")
        #expect(x.groups.sizes == y.groups.sizes, "group sizes \(note)")
        #expect(x.groups.holders == y.groups.holders && x.groups.waiting == y.groups.waiting, "groups \(note)")
        #expect(x.health == y.health && x.overdueAt == y.overdueAt && x.paused == y.paused, "health \(note)")
        for key in x.tasks.keys { #expect(x.explain(key, at: now) == y.explain(key, at: now), "why \(key) \(note)") }
        for target in ["a", "b", "g1", "g2", "h", "n", "processing", "appRefresh", "processing:n"] {
            let rx = Result { () throws(TargetError) -> [TaskKey] in try x.resolver.resolve(target) }
            let ry = Result { () throws(TargetError) -> [TaskKey] in try y.resolver.resolve(target) }
            #expect(rx == ry, "\(target) \(note)")
        }
    }

    /// Time passes over two hours: at each step what is due fires, and every run in progress ends
    /// (successfully); the traces of each step.
    func drive(_ s: inout Scheduler) -> [[String]] {
        var traces: [[String]] = []
        for seconds in [1.0, 61, 95, 1_810, 3_700, 5_410, 7_300] {
            let now = clock.at(seconds: seconds)
            var trace = s.advance(to: now).trace
            for id in s.runs.keys.sorted() where s.runs[id]?.started != nil {
                trace += s.handlerEnded(runID: id, termination: .exited(0), at: now).trace
            }
            traces.append(trace)
        }
        return traces
    }

    @Test("an added task is armed from now and fires at its elapse; its runs start as any task's do")
    func addThenFire() throws {
        var s = Scheduler(definitions: [commandTask("a")], startedAt: clock.now, random: SeededRandom(seed: 1))
        var d = try newTask()
        d.randomizedDelay = .seconds(0)
        d.concurrencyGroup = nil
        let (diff, actions) = s.add(d, at: clock.now)
        #expect(diff.added == [d.key] && diff.changed.isEmpty && actions.isEmpty)
        #expect(try s.resolver.resolveOne("n") == d.key)
        // 2026-01-01 00:00 UTC: the elapse comes at 00:30; ExpectSuccessWithinSec= is armed too.
        #expect(s.tasks[d.key]?.nextElapseRealtime(now: clock.now) == clock.now.realtime + 1_800_000_000)
        #expect(s.nextDeadline == clock.now.monotonic + 1_800_000_000)
        #expect(s.overdueAt[d.key] == clock.now.monotonic + 7_200_000_000)
        #expect(s.advance(to: clock.at(seconds: 1_799)).isEmpty)
        let fired = s.advance(to: clock.at(seconds: 1_800))
        guard case .start(let run) = fired.first else { return #expect(Bool(false), "\(fired.trace)") }
        #expect(run.key == d.key && run.trigger == .timer && fired.trace == ["start", "started"])
        #expect(s.tasks[d.key]?.currentRunID == run.id)
    }

    @Test("adding a task leaves the same state as a reload that adds it, and it goes on alike")
    func addIsAReload() throws {
        let (start, definitions) = try world()
        var (added, reloaded) = (start, start)
        let n = try newTask()
        let now = clock.at(seconds: 0.5)
        let one = added.add(n, at: now)
        let all = reloaded.reload(definitions + [n], maxConcurrentRuns: 4, at: now)
        #expect(one.diff.added == [n.key] && all.diff.added == [n.key])
        #expect(one.actions == all.actions)
        expectSame(added, reloaded, at: now, "after the add")
        #expect(drive(&added) == drive(&reloaded))
        expectSame(added, reloaded, at: clock.at(seconds: 7_300), "two hours on")
    }

    @Test("adding a changed definition restarts its runs as a reload does; an equal one changes nothing")
    func addChangedIsAReload() throws {
        let (start, definitions) = try world()
        var (added, reloaded) = (start, start)
        var a = definitions[0]
        a.budget = .seconds(90)
        let now = clock.at(seconds: 0.5)
        let one = added.add(a, at: now)
        let all = reloaded.reload([a] + definitions.dropFirst(), maxConcurrentRuns: 4, at: now)
        #expect(one.diff.changed == [a.key] && all.diff.changed == [a.key])
        #expect(one.actions == all.actions && one.actions.trace.filter { $0 == "cancel" }.count == 2)
        expectSame(added, reloaded, at: now, "after the change")
        #expect(drive(&added) == drive(&reloaded))
        let same = added.add(a, at: clock.at(seconds: 7_301))
        #expect(same.diff.unchanged == [a.key] && same.diff.isEmpty && same.actions.isEmpty)
    }

    @Test("removing a task leaves the same state as a reload without it, for each task of the world")
    func removeIsAReload() throws {
        for name in ["a", "b", "g1", "g2", "h"] {
            let (start, definitions) = try world()
            var (removed, reloaded) = (start, start)
            let key = definitions.first { $0.key.identifier == name }!.key
            let now = clock.at(seconds: 0.5)
            let one = removed.remove(key, at: now)
            let all = reloaded.reload(definitions.filter { $0.key != key }, maxConcurrentRuns: 4, at: now)
            #expect(one.diff.removed == [key] && one.diff == all.diff.removedOnly, "\(name)")
            #expect(one.actions == all.actions, "\(name)")
            expectSame(removed, reloaded, at: now, "after removing \(name)")
            #expect(drive(&removed) == drive(&reloaded), "\(name)")
        }
    }

    @Test("removing the last task of a group forgets the group's size, as a reload does")
    func removeLastOfGroup() throws {
        var s = try world().0
        let g1 = TaskKey(kind: "processing", identifier: "g1")
        let g2 = TaskKey(kind: "processing", identifier: "g2")
        let waiting = s.tasks[g2]!.currentRunID!
        #expect(s.runs[waiting]?.waitingForGroup == true)
        // g1's run, cancelled, holds its place until it ends; then g2's run takes it.
        #expect(s.remove(g1, at: clock.at(seconds: 1)).actions.trace == ["cancel", "cancelling"])
        #expect(s.groups.sizes["g"] == 1 && s.runs[waiting]?.waitingForGroup == true)
        let cancelled = s.groups.holders["g"]!.first!
        let ended = s.handlerEnded(runID: cancelled, termination: .signaled(15), at: clock.at(seconds: 2))
        #expect(ended.trace == ["ended:cancelled", "start", "started", "settle:g1"])
        #expect(s.remove(g2, at: clock.at(seconds: 3)).actions.trace == ["cancel", "cancelling"])
        #expect(s.groups.sizes["g"] == nil)
    }

    @Test("removing a task with runs in progress cancels them (reason removed) and forgets the task")
    func removeWithRunInProgress() throws {
        var s = try world().0
        let a = TaskKey(kind: "processing", identifier: "a")
        let running = Array(s.tasks[a]!.inProgress)
        let queued = s.tasks[a]!.queue
        #expect(running.count == 2 && queued.count == 1)
        let (diff, actions) = s.remove(a, at: clock.at(seconds: 1))
        #expect(diff.removed == [a] && diff.added.isEmpty && diff.changed.isEmpty)
        // The queued run ends at once, answering its wake; the running ones are signalled.
        #expect(actions.trace == ["ended:cancelled", "settle:a3", "cancel", "cancelling", "cancel", "cancelling"])
        #expect(s.tasks[a] == nil && s.explain(a, at: clock.at(seconds: 1)).isEmpty)
        #expect(throws: TargetError.self) { try s.resolver.resolve("a") }
        #expect(running.allSatisfy { s.runs[$0]?.cancelReason == .removed && s.runs[$0]?.fenced == true })
        // Each ends later as a fenced run: its wake is answered, nothing is retried, the task stays gone.
        let end = s.handlerEnded(runID: running[0], termination: .exited(1), at: clock.at(seconds: 2))
        #expect(end.trace == ["ended:cancelled", "settle:a1"])
        #expect(s.tasks[a] == nil && s.health[a] == nil)
        #expect(s.remove(a, at: clock.at(seconds: 3)).diff.isEmpty)
    }

    @Test("add and remove leave every other task's state and runs as they were, not even rewritten")
    func othersUntouched() throws {
        var s = try world().0
        let n = try newTask()
        let a = TaskKey(kind: "processing", identifier: "a")
        for change in 0..<2 {
            let others = s.tasks.keys.filter { $0 != n.key && $0 != a }
            let before = others.map { s.tasks[$0]! }
            let runsBefore = s.runs.filter { $0.value.key != n.key && $0.value.key != a }
            if change == 0 { _ = s.add(n, at: clock.at(seconds: 1)) } else { _ = s.remove(a, at: clock.at(seconds: 1)) }
            let after = others.map { s.tasks[$0]! }
            #expect(after == before, "change \(change)")
            // The same activity boxes: a write would have copied a box this test's copy shares.
            #expect(zip(before, after).allSatisfy { $0.activityBox === $1.activityBox }, "change \(change)")
            #expect(s.runs.filter { $0.value.key != n.key && $0.value.key != a } == runsBefore, "change \(change)")
        }
    }
}

extension ReloadDiff {
    /// The diff with its removals alone (a reload lists the tasks it left unchanged too).
    fileprivate var removedOnly: ReloadDiff {
        var diff = ReloadDiff()
        diff.removed = removed
        return diff
    }
}
