import Testing

@testable import TaskScheduling

/// `taskctl drain` in the pure scheduler: the runs in progress go on, nothing new starts (wakes
/// and retries wait, holding no slot), `why` says so, and the end of the drain starts what waited.
@Suite("Scheduler: drain")
struct DrainTests {
    func scheduler() -> (Scheduler, ManualClock) {
        let clock = ManualClock()
        let s = Scheduler(
            definitions: [commandTask("a"), commandTask("b"), commandTask("c")], startedAt: clock.now,
            random: SeededRandom(seed: 3))
        return (s, clock)
    }

    @Test("while draining, the run in progress goes on and a wake waits; the end of the drain starts it")
    func wakesWaitForTheEnd() {
        var (s, clock) = scheduler()
        let a = s.wakeOne("a", at: clock.now)
        #expect(a.trace.contains("start"))
        #expect(s.drain() == false, "no drain was in progress")
        #expect(s.drain() == true, "a second drain joins the first")
        let b = s.wakeOne("b", at: clock.advance(seconds: 1))
        #expect(!b.trace.contains("start") && b.trace.contains("waiting"))
        #expect(s.runs[a.run.id]?.state == .running && s.runs[b.run.id]?.state == .queued)
        #expect(s.activeCount == 1 && s.waitingToStart == 1)
        // The active run ends: still nothing starts while the drain lasts.
        let ended = s.handlerEnded(runID: a.run.id, termination: .exited(0), at: clock.advance(seconds: 1))
        #expect(!ended.trace.contains("start") && s.activeCount == 0)
        let why = s.explain(TaskKey(kind: "appRefresh", identifier: "b"), at: clock.now)
        #expect(why.first?.code == .draining)
        let end = s.endDrain(at: clock.advance(seconds: 1))
        #expect(end.trace.filter { $0 == "start" }.count == 1)
        #expect(s.runs[b.run.id]?.state == .running && !s.isDraining && s.waitingToStart == 0)
        #expect(s.endDrain(at: clock.now).isEmpty, "ending no drain does nothing")
    }

    @Test("a retry that falls due while draining waits too, and starts at the end")
    func retriesWait() {
        var clock = ManualClock()
        var s = Scheduler(
            definitions: [policyTask("c", maxAttempts: 2, backoff: 1)], startedAt: clock.now,
            random: SeededRandom(seed: 4))
        let first = s.wakeOne("c", at: clock.now)
        _ = s.handlerEnded(runID: first.run.id, termination: .exited(1), at: clock.advance(seconds: 1))
        s.drain()
        let fired = s.advance(to: clock.advance(seconds: 2))
        #expect(!fired.trace.contains("start") && s.waitingToStart == 1)
        let end = s.endDrain(at: clock.advance(seconds: 1))
        #expect(end.trace.contains("start"))
        #expect(s.runs.values.contains { $0.attempt == 2 && $0.state == .running })
    }
}
