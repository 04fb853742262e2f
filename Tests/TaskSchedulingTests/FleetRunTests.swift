import Testing

@testable import TaskScheduling

/// The scheduler's side of fleet runs, on a manual clock: a run the daemon did not start because
/// another host holds its slot ends `cancelled` (`elsewhere`) with the holder; a slot offered back
/// queues behind the task's run in progress instead of joining it.
@Suite("Scheduler: fleet runs (claimed, not run here, taken over)")
struct FleetRunTests {
    let key = TaskKey(kind: "appRefresh", identifier: "t")

    func ended(_ actions: [SchedulerAction]) -> Run? {
        actions.compactMap { action -> Run? in
            if case .report(.ended(let run)) = action { return run }
            return nil
        }.first
    }

    @Test("not run here: cancelled, reason elsewhere, naming the holder and its token; the slot is free again")
    func notRunHere() throws {
        let clock = ManualClock()
        var s = Scheduler(definitions: [commandTask("t")], startedAt: clock.now, random: SeededRandom(seed: 7))
        let run = try #require(s.wake(key: key, at: clock.now).result?.run)
        let actions = s.notRun(runID: run.id, reason: .elsewhere, host: "web-2", token: 81, at: clock.at(seconds: 0.05))
        let end = try #require(ended(actions))
        #expect(end.outcome == .cancelled && end.cancelReason == .elsewhere)
        #expect(end.fleetHost == "web-2" && end.fenceToken == 81 && end.duration == 50_000)
        #expect(s.activeCount == 0 && s.runs.isEmpty)
        #expect(s.notRun(runID: run.id, reason: .elsewhere, at: clock.now).isEmpty, "once only")
    }

    @Test("a run cancelled while its claim was pending keeps its own reason")
    func cancelledWhilePending() throws {
        let clock = ManualClock()
        var s = Scheduler(definitions: [commandTask("t")], startedAt: clock.now, random: SeededRandom(seed: 7))
        let run = try #require(s.wake(key: key, at: clock.now).result?.run)
        let cancelled = try s.cancel(target: run.id, at: clock.now)
        #expect(cancelled.actions.trace.contains("cancel"))
        let end = try #require(ended(s.notRun(runID: run.id, reason: .requested, at: clock.at(seconds: 1))))
        #expect(end.outcome == .cancelled && end.cancelReason == .requested && end.fleetHost == nil)
    }

    @Test("a run whose budget ended before its claim was won ends cancelled, with the reason given: never retried")
    func budgetEndedWhilePending() throws {
        var clock = ManualClock()
        var definition = commandTask("t", budget: 10, grace: 2)
        definition.retry.maxAttempts = 3
        var s = Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 7))
        let run = try #require(s.wake(key: key, at: clock.now).result?.run)
        #expect(s.advance(to: clock.advance(seconds: 8)).trace.contains("cancel"))
        let end = try #require(ended(s.notRun(runID: run.id, reason: .fleetUnavailable, at: clock.now)))
        #expect(end.outcome == .cancelled && end.cancelReason == .fleetUnavailable)
        #expect(s.tasks[key]?.retry == nil, "no retry: a retry of a Fleet=once run is not claimed")
    }

    @Test("Overlap=skip drops a trigger, but never a slot taken over: it queues behind the run in progress")
    func skipKeepsATakeover() throws {
        var clock = ManualClock()
        var definition = commandTask("t")
        definition.overlap = .skip
        var s = Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 7))
        _ = try #require(s.wake(key: key, at: clock.now).result?.run)
        #expect(s.wake(key: key, at: clock.now).result?.disposition == .skipped)
        let queued = s.takeOver(key, scheduled: clock.now.realtime - 3_000_000, at: clock.advance(seconds: 1))
        #expect(queued.trace == ["queued"] && s.tasks[key]?.queue.count == 1)
    }

    @Test("claimed: the run carries its host and token; a takeover queues behind the run in progress")
    func claimedAndTakeover() throws {
        var clock = ManualClock()
        var definition = commandTask("t")
        definition.overlap = .coalesce
        var s = Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 7))
        let run = try #require(s.wake(key: key, at: clock.now).result?.run)
        s.claimed(runID: run.id, host: "web-1", token: 90)
        #expect(s.runs[run.id]?.fleetHost == "web-1" && s.runs[run.id]?.fenceToken == 90)
        let slot = clock.now.realtime - 3_000_000
        let queued = s.takeOver(key, scheduled: slot, at: clock.advance(seconds: 1))
        #expect(queued.trace == ["queued"], "another slot's work: never joined to the run in progress")
        let done = s.handlerEnded(runID: run.id, termination: .exited(0), at: clock.advance(seconds: 1))
        let next = try #require(
            done.compactMap { action -> Run? in
                if case .start(let r) = action { return r }
                return nil
            }.first)
        #expect(next.trigger == .takeover && next.scheduledRealtime == slot && next.fenceToken == nil)
    }
}
