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

    @Test("a restart the command runs outlive (the run keeper's scope) cancels only Swift runs, reason restart")
    mutating func restartLeavesCommandRuns() {
        var s = Scheduler(
            definitions: [swiftTask("s"), swiftTask("t"), commandTask("a")], startedAt: clock.now,
            random: SeededRandom(seed: 6))
        let withWake = s.wakeOne("s", record: "w1", at: clock.now)
        let withoutWake = s.wakeOne("t", at: clock.now)
        let command = s.wakeOne("a", record: "w2", at: clock.now)
        let begun = s.beginUpgrade(at: clock.advance(seconds: 1), reason: .restart)
        #expect(begun.trace.filter { $0 == "cancel" }.count == 2)
        #expect(s.runs[withWake.run.id]?.cancelReason == .restart)
        #expect(s.runs[withoutWake.run.id]?.cancelReason == .restart)
        #expect(s.runs[command.run.id]?.state == .running && s.runs[command.run.id]?.cancelReason == nil)
        let ended = s.handlerEnded(runID: withWake.run.id, termination: .threw("cancelled"), at: clock.now)
        #expect(!ended.trace.contains { $0.hasPrefix("settle") }, "its wake runs again after the restart")
        _ = s.handlerEnded(runID: withoutWake.run.id, termination: .threw("cancelled"), at: clock.now)
        // The run that answers no wake is kept to run again (trigger resume); the wake's replays by itself.
        #expect(s.takeCutShort().map(\.runID) == [withoutWake.run.id])
        #expect(s.activeInProcess == 0 && s.runs[command.run.id]?.state == .running)
    }

    @Test(
        "a restart cancels every run (reason restart); those that answer no wake are kept to run again, the others' wakes replay"
    )
    mutating func restartKeepsWhatItCuts() {
        var s = Scheduler(
            definitions: [commandTask("a"), commandTask("b"), swiftTask("s")], startedAt: clock.now,
            random: SeededRandom(seed: 5))
        let a = s.wakeOne("a", id: "w-a", at: clock.now)
        let b = s.wakeOne("b", record: "r1", at: clock.now)
        let stop = s.shutdown(at: clock.advance(seconds: 1), reason: .restart)
        #expect(stop.trace.filter { $0 == "cancel" }.count == 2)
        #expect(s.runs[a.run.id]?.cancelReason == .restart)
        let endA = s.handlerEnded(runID: a.run.id, termination: .signaled(15), at: clock.now)
        let endB = s.handlerEnded(runID: b.run.id, termination: .signaled(15), at: clock.now)
        #expect(!(endA + endB).trace.contains { $0.hasPrefix("settle") }, "the wake of b is kept, to replay")
        #expect(s.cutShort.map(\.runID) == [a.run.id], "b answers a wake: the wake replays it")
        #expect(s.cutShort.first?.wakeID == "w-a")

        // The next image runs it again: trigger resume, the same wake id, a link to the run cut.
        var next = Scheduler(
            definitions: [commandTask("a"), commandTask("b")], startedAt: clock.now, random: SeededRandom(seed: 6))
        var gone = s.cutShort[0]
        gone.run.key = TaskKey(kind: gone.key.kind, identifier: "gone")
        let (count, actions) = next.replay(s.cutShort + [gone], at: clock.now)
        #expect(count == 1, "a run whose task is gone is left out")
        #expect(actions.trace.contains("start"))
        let again = next.runs.values.first { $0.key.identifier == "a" }
        #expect(again?.trigger == .resume && again?.wakeID == "w-a" && again?.previousAttemptID == a.run.id)
    }

    @Test("a stop cancels with reason shutdown and keeps nothing to run again but the wakes")
    mutating func stopKeepsNothing() {
        var s = Scheduler(definitions: [commandTask("a")], startedAt: clock.now, random: SeededRandom(seed: 7))
        let a = s.wakeOne("a", at: clock.now)
        _ = s.shutdown(at: clock.advance(seconds: 1))
        #expect(s.runs[a.run.id]?.cancelReason == .shutdown)
        _ = s.handlerEnded(runID: a.run.id, termination: .signaled(15), at: clock.now)
        #expect(s.cutShort.isEmpty)
    }

    @Test("an upgrade keeps the Swift run it cut short, when it answers no wake, to run again")
    mutating func upgradeKeepsSwiftRuns() {
        var s = Scheduler(definitions: [swiftTask("s")], startedAt: clock.now, random: SeededRandom(seed: 8))
        let run = s.wakeOne("s", at: clock.now)
        _ = s.beginUpgrade(at: clock.advance(seconds: 1))
        _ = s.handlerEnded(runID: run.run.id, termination: .threw("CancellationError"), at: clock.now)
        #expect(s.cutShort.map(\.runID) == [run.run.id])
    }

    @Test(
        "the timers go on across an upgrade: a start-up timer that fired does not fire again, an interval keeps its phase"
    )
    mutating func timersCarryOver() {
        let t0 = clock.now.monotonic
        let task = commandTask("t", onStartup: [10], onUnitActive: [60])
        var old = Scheduler(definitions: [task], startedAt: clock.now, random: SeededRandom(seed: 9))
        let fired = old.advance(to: clock.at(seconds: 10))
        #expect(fired.trace.contains("start"))
        let run = old.runs.values.first!
        _ = old.handlerEnded(runID: run.id, termination: .exited(0), at: clock.at(seconds: 11))
        _ = clock.advance(seconds: 20)
        // Without the carry, the new image would fire OnStartupSec= again 10 s after it starts.
        let fresh = Scheduler(definitions: [task], startedAt: clock.now, random: SeededRandom(seed: 10))
        #expect(fresh.nextDeadline == clock.now.monotonic + 10_000_000)
        var next = Scheduler(definitions: [task], startedAt: clock.now, random: SeededRandom(seed: 10))
        next.carryTimers(old.timerCarries, at: clock.now)
        #expect(next.nextDeadline == t0 + 70_000_000, "60 s after the run the old image started")
        let early = next.advance(to: clock.at(seconds: 49.999))
        #expect(early.trace.isEmpty)
        let due = next.advance(to: clock.at(seconds: 50))
        #expect(due.trace.contains("start"))
    }
}
