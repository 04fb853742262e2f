import Testing

@testable import TaskScheduling

@Suite("Overlap= and task(id:) supersession with fencing (manual clock)")
struct OverlapTests {
    var clock = ManualClock()

    func scheduler(_ tasks: [TaskDefinition], slots: Int = 8) -> Scheduler {
        Scheduler(definitions: tasks, startedAt: clock.now, random: SeededRandom(seed: 7), maxConcurrentRuns: slots)
    }

    @Test("queue: a trigger waits behind the run in progress and starts when it ends, in order")
    func queue() {
        var s = scheduler([policyTask("q", overlap: .queue)])
        let first = s.wakeOne("q", at: clock.now)
        let second = s.wakeOne("q", at: clock.at(seconds: 1))
        let third = s.wakeOne("q", at: clock.at(seconds: 2))
        #expect(second.disposition == .queued && second.trace == ["queued"])
        #expect(third.disposition == .queued)
        #expect(s.tasks[first.run.key]?.queue == [second.run.id, third.run.id])
        #expect(s.runs[second.run.id]?.phase == .queued)

        let end = s.handlerEnded(runID: first.run.id, termination: .exited(0), at: clock.at(seconds: 10))
        #expect(end.trace == ["ended:completed", "start", "started"])
        let started = s.runs[second.run.id]!
        #expect(started.phase == .running)
        #expect(started.waited == 9_000_000)
        // The budget counts from the start, not from the trigger.
        #expect(started.cancelAt == clock.at(seconds: 10).monotonic + 25_000_000)
        #expect(s.tasks[first.run.key]?.currentRunID == second.run.id)
        #expect(s.tasks[first.run.key]?.queue == [third.run.id])
    }

    @Test("queue: the queue is bounded; the overflow joins the last queued run and is reported")
    func overflow() {
        var s = scheduler([policyTask("q", overlap: .queue, queueLimit: 2)])
        _ = s.wakeOne("q", record: "r1", at: clock.now)
        _ = s.wakeOne("q", record: "r2", at: clock.now)
        let last = s.wakeOne("q", record: "r3", at: clock.now)
        let over = s.wakeOne("q", record: "r4", at: clock.now)
        #expect(over.disposition == .overflow)
        #expect(over.trace == ["overflow"])
        #expect(over.run.id == last.run.id)
        #expect(s.runs[last.run.id]?.records == ["r3", "r4"])
        #expect(s.tasks[last.run.key]?.queue.count == 2)
    }

    @Test("coalesce: a trigger joins the run in progress, even one cancelling on its budget")
    func coalesce() {
        var s = scheduler([policyTask("c", budget: 10, grace: 2)])
        let first = s.wakeOne("c", record: "a", at: clock.now)
        _ = s.advance(to: clock.at(seconds: 8))
        let second = s.wakeOne("c", record: "b", at: clock.at(seconds: 9))
        #expect(second.disposition == .coalesced && second.run.id == first.run.id)
        #expect(s.runs[first.run.id]?.records == ["a", "b"])
    }

    @Test("replace: the run in progress is cancelled (superseded) and a new run starts at once")
    func replace() {
        var s = scheduler([policyTask("r", overlap: .replace)])
        let first = s.wakeOne("r", at: clock.now)
        let second = s.wakeOne("r", at: clock.at(seconds: 1))
        #expect(second.trace == ["cancel", "cancelling", "start", "started"])
        #expect(second.disposition == .started)
        #expect(s.runs[first.run.id]?.phase == .cancelling(.superseded))
        #expect(s.runs[first.run.id]?.fenced == true)
        #expect(s.tasks[first.run.key]?.currentRunID == second.run.id)
    }

    @Test("skip: a trigger while a run is in progress is dropped, its wake answered; the next one after the end runs")
    func skip() {
        var s = scheduler([policyTask("s", overlap: .skip)])
        let first = s.wakeOne("s", record: "a", at: clock.now)
        let second = s.wakeOne("s", record: "b", at: clock.at(seconds: 1))
        #expect(second.disposition == .skipped && second.run.id == first.run.id)
        #expect(second.trace == ["settle:b", "skipped"])
        #expect(s.runs[first.run.id]?.records == ["a"] && s.tasks[first.run.key]?.queue.isEmpty == true)
        let why = s.explain(first.run.key, at: clock.at(seconds: 1))
        #expect(why.contains { $0.code == .skipsTrigger && $0.runID == first.run.id })
        _ = s.handlerEnded(runID: first.run.id, termination: .exited(0), at: clock.at(seconds: 2))
        let third = s.wakeOne("s", at: clock.at(seconds: 3))
        #expect(third.disposition == .started && third.trace == ["start", "started"])
        // An id still decides by itself: another id replaces the run, the same one joins it.
        let other = s.wakeOne("s", id: "x", at: clock.at(seconds: 4))
        #expect(other.disposition == .started && s.runs[third.run.id]?.cancelReason == .superseded)
        #expect(s.wakeOne("s", id: "x", at: clock.at(seconds: 5)).disposition == .coalesced)
    }

    @Test("task(id:): the same id joins the run whatever the policy; another id supersedes it")
    func wakeIDs() {
        var s = scheduler([policyTask("t", overlap: .queue)])
        let a = s.wakeOne("t", id: "paris", at: clock.now)
        let same = s.wakeOne("t", id: "paris", at: clock.at(seconds: 1))
        #expect(same.disposition == .coalesced && same.run.id == a.run.id)
        let queued = s.wakeOne("t", at: clock.at(seconds: 2))
        #expect(queued.disposition == .queued)
        let b = s.wakeOne("t", id: "london", at: clock.at(seconds: 3))
        #expect(b.disposition == .started)
        // The superseded run is signalled; the run queued behind it is dropped with it.
        #expect(b.trace == ["cancel", "cancelling", "ended:cancelled", "start", "started"])
        #expect(s.runs[a.run.id]?.cancelReason == .superseded)
        #expect(s.runs[queued.run.id] == nil)
        #expect(s.runs[b.run.id]?.wakeID == "london")
    }

    @Test("fencing: a superseded run that finishes late, even successfully, is stale: not the last result, not retried")
    func fencing() {
        var s = scheduler([policyTask("f", maxAttempts: 3)])
        let a = s.wakeOne("f", id: "v1", record: "ra", at: clock.now)
        let b = s.wakeOne("f", id: "v2", record: "rb", at: clock.at(seconds: 1))
        let bEnd = s.handlerEnded(runID: b.run.id, termination: .exited(0), at: clock.at(seconds: 2))
        #expect(bEnd.trace == ["ended:completed", "settle:rb"])
        // The slow, superseded run reports success only now.
        let late = s.handlerEnded(runID: a.run.id, termination: .exited(0), at: clock.at(seconds: 4))
        #expect(late.trace == ["ended:cancelled", "settle:ra"])
        let ended = late.endedRun!
        #expect(ended.fenced && ended.outcome == .cancelled && ended.cancelReason == .superseded)
        #expect(s.tasks[a.run.key]?.lastRun?.id == b.run.id)
        #expect(s.tasks[a.run.key]?.retry == nil)

        // A failed late result is not retried either.
        let c = s.wakeOne("f", id: "v3", at: clock.at(seconds: 5))
        _ = s.wakeOne("f", id: "v4", at: clock.at(seconds: 6))
        let failed = s.handlerEnded(runID: c.run.id, termination: .exited(1), at: clock.at(seconds: 7))
        #expect(failed.trace == ["ended:cancelled"])
        #expect(s.tasks[a.run.key]?.retry == nil)
    }

    @Test("cancel by run id ends a queued run at once; cancel by name clears the run, the queue and the retry")
    func cancelling() throws {
        var s = scheduler([policyTask("q", overlap: .queue)])
        let first = s.wakeOne("q", at: clock.now)
        let second = s.wakeOne("q", at: clock.now)
        let third = s.wakeOne("q", at: clock.now)
        let (byID, actions) = try s.cancel(target: second.run.id, at: clock.at(seconds: 1))
        #expect(actions.trace == ["ended:cancelled"])
        #expect(byID.first?.started == nil && byID.first?.cancelReason == .requested)
        #expect(s.tasks[first.run.key]?.queue == [third.run.id])

        let (all, more) = try s.cancel(target: "q", at: clock.at(seconds: 2))
        #expect(Set(all.map(\.id)) == [first.run.id, third.run.id])
        #expect(more.trace == ["ended:cancelled", "cancel", "cancelling"])
        #expect(s.tasks[first.run.key]?.currentRunID == nil)
        // The task is free at once; the cancelled run still gets its hard stop.
        #expect(s.wakeOne("q", at: clock.at(seconds: 3)).disposition == .started)
        #expect(s.nextDeadline == clock.at(seconds: 2 + 5).monotonic)
    }
}
