import Testing

@testable import TaskScheduling

/// `taskctl upgrade` in the pure scheduler: the new image adopts the command runs the old one
/// started, and each goes on under the deadlines it had; Swift handlers' runs are cancelled with
/// reason `upgrade`, their wakes kept to run again.
@Suite("Scheduler: adoption after an upgrade (manual clock)")
struct AdoptionTests {
    var clock = ManualClock()
    let a = TaskKey(kind: "appRefresh", identifier: "a")

    /// The old image: `a` (budget 30 s, grace 5 s) woken at the clock's start, 10 s ago.
    mutating func runningInOldImage(record: String? = nil) -> Run {
        var old = Scheduler(definitions: [commandTask("a")], startedAt: clock.now, random: SeededRandom(seed: 1))
        let started = old.wakeOne("a", record: record, at: clock.now)
        #expect(started.trace.contains("start"))
        _ = clock.advance(seconds: 10)
        return old.runs[started.run.id]!
    }

    func newImage(_ definitions: [TaskDefinition] = [commandTask("a")]) -> Scheduler {
        Scheduler(definitions: definitions, startedAt: clock.now, random: SeededRandom(seed: 2))
    }

    @Test("an adopted run is its task's current run and keeps its cancellation and hard stop instants")
    mutating func keepsItsDeadlines() {
        let run = runningInOldImage()
        let t0 = run.started!.monotonic
        var s = newImage()
        let adopted = s.adopt(run)
        #expect(adopted)
        #expect(s.tasks[a]?.currentRunID == run.id && s.activeCount == 1 && s.runs[run.id]?.fenced == false)
        #expect(s.nextDeadline == t0 + 25_000_000, "cancellation one grace before the budget's end")
        let early = s.advance(to: clock.at(seconds: 14.999_999))
        #expect(early.trace.isEmpty)
        let cancelled = s.advance(to: clock.at(seconds: 15))
        #expect(cancelled.trace == ["cancel", "cancelling"])
        #expect(s.nextDeadline == t0 + 30_000_000, "the hard stop at the budget's end")
        let killed = s.advance(to: clock.at(seconds: 20))
        #expect(killed.trace == ["kill", "killing"])
        let ended = s.handlerEnded(runID: run.id, termination: .signaled(9), at: clock.at(seconds: 20.001))
        #expect(ended.trace.contains("ended:killed"))
        #expect(s.tasks[a]?.lastRun?.id == run.id && s.activeCount == 0)
    }

    @Test("a wake while the adopted run goes on joins it, as it would have in the old image")
    mutating func wakesJoinTheAdoptedRun() {
        let run = runningInOldImage()
        var s = newImage()
        s.adopt(run)
        let joined = s.wakeOne("a", at: clock.at(seconds: 1))
        #expect(joined.run.id == run.id && joined.disposition == .coalesced)
        #expect(!joined.trace.contains("start"))
    }

    @Test("a run whose task the new configuration dropped is fenced, goes on, and answers its wakes at its end")
    mutating func taskGoneIsFenced() {
        let run = runningInOldImage(record: "w1")
        var s = newImage([commandTask("b")])
        let adopted = s.adopt(run)
        #expect(adopted)
        #expect(s.runs[run.id]?.fenced == true && s.activeCount == 1)
        let ended = s.handlerEnded(runID: run.id, termination: .exited(0), at: clock.at(seconds: 1))
        #expect(ended.trace.contains("settle:w1") && ended.trace.contains("ended:completed"))
        #expect(s.activeCount == 0)
    }

    @Test("adopting a known run, an ended one or one that never started changes nothing")
    mutating func adoptsOnlyActiveRunsOnce() {
        let run = runningInOldImage()
        var s = newImage()
        let first = s.adopt(run)
        let second = s.adopt(run)
        #expect(first && !second, "known already")
        #expect(s.activeCount == 1)
        var ended = run
        ended.id = "other"
        ended.outcome = .completed
        let adoptedEnded = s.adopt(ended)
        #expect(!adoptedEnded)
        var queued = run
        queued.id = "queued"
        queued.phase = .queued
        queued.started = nil
        let adoptedQueued = s.adopt(queued)
        #expect(!adoptedQueued)
    }

    @Test("an upgrade cancels Swift handlers' runs (reason upgrade) and keeps their wakes; nothing starts meanwhile")
    mutating func upgradeCancelsSwiftRuns() {
        var s = Scheduler(
            definitions: [swiftTask("s"), commandTask("a")], startedAt: clock.now, random: SeededRandom(seed: 4))
        let swiftRun = s.wakeOne("s", record: "w9", at: clock.now)
        let command = s.wakeOne("a", at: clock.now)
        let begun = s.beginUpgrade(at: clock.advance(seconds: 1))
        #expect(begun.trace == ["cancel", "cancelling"])
        #expect(s.runs[swiftRun.run.id]?.cancelReason == .upgrade && s.runs[command.run.id]?.state == .running)
        #expect(s.activeInProcess == 1)
        let ended = s.handlerEnded(runID: swiftRun.run.id, termination: .threw("cancelled"), at: clock.now)
        #expect(ended.trace.contains("ended:cancelled"))
        #expect(!ended.trace.contains { $0.hasPrefix("settle") }, "its wake runs again in the new image")
        #expect(!ended.trace.contains { $0.hasPrefix("retry") })
        // An upgrade that could not happen: runs start again.
        _ = s.handlerEnded(runID: command.run.id, termination: .exited(0), at: clock.now)
        let refused = s.wake(key: a, at: clock.now).result
        #expect(refused == nil, "no run starts during the upgrade")
        let resumed = s.abandonUpgrade(at: clock.now)
        #expect(resumed.isEmpty, "nothing waited")
        #expect(!s.isStopping)
        let after = s.wakeOne("a", at: clock.advance(seconds: 1))
        #expect(after.trace.contains("start"))
    }
}
