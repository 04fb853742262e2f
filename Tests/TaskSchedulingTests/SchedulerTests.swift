import Testing

@testable import TaskScheduling

@Suite("Scheduler: budgets, outcomes, coalescing, timers, shutdown (manual clock)")
struct SchedulerTests {
    var clock = ManualClock()

    func scheduler(_ tasks: [TaskDefinition]) -> Scheduler {
        Scheduler(definitions: tasks, startedAt: clock.now, random: SeededRandom(seed: 42))
    }

    @Test("cancellation is signalled at budget − grace and the hard stop comes at the budget's end")
    mutating func budgetAndGrace() throws {
        var s = scheduler([commandTask("refresh", budget: 30, grace: 5)])
        let (runs, actions) = try s.wake(target: "refresh", at: clock.now)
        #expect(actions.trace == ["start", "started"])
        let run = try #require(runs.first?.run)
        #expect(run.cancelAt == clock.now.monotonic + 25_000_000)
        #expect(run.killAt == clock.now.monotonic + 30_000_000)
        #expect(run.deadlineRealtime == clock.now.realtime + 30_000_000)
        #expect(s.nextDeadline == run.cancelAt)

        #expect(s.advance(to: clock.at(seconds: 24.999_999)).isEmpty)
        #expect(s.advance(to: clock.at(seconds: 25)).trace == ["cancel", "cancelling"])
        #expect(s.runs[run.id]?.phase == .cancelling(.budget))
        #expect(s.nextDeadline == run.killAt)
        #expect(s.advance(to: clock.at(seconds: 29.9)).isEmpty)
        #expect(s.advance(to: clock.at(seconds: 30)).trace == ["kill", "killing"])
        #expect(s.nextDeadline == nil)

        let end = s.handlerEnded(runID: run.id, termination: .signaled(9), at: clock.at(seconds: 30.01))
        #expect(end.trace == ["ended:killed"])
        #expect(end.endedRun?.duration == 30_010_000)
        #expect(end.endedRun?.cancelReason == .budget)
        #expect(s.tasks[run.key]?.lastRun?.outcome == .killed)
        #expect(s.tasks[run.key]?.currentRunID == nil)
    }

    @Test("a grace at least as long as the budget signals cancellation at the start")
    mutating func graceLongerThanBudget() throws {
        var s = scheduler([commandTask("quick", budget: 2, grace: 5)])
        let run = try #require(try s.wake(target: "quick", at: clock.now).runs.first?.run)
        #expect(run.cancelAt == clock.now.monotonic)
        #expect(s.advance(to: clock.now).trace == ["cancel", "cancelling"])
    }

    @Test(
        "outcomes of handlers that end before any cancellation",
        arguments: [
            (Termination.exited(0), RunOutcome.completed), (.returned, .completed), (.exited(3), .failed),
            (.signaled(11), .failed), (.threw("boom"), .failed), (.spawnFailed("no such file"), .failed),
        ])
    mutating func outcomes(termination: Termination, expected: RunOutcome) throws {
        var s = scheduler([commandTask("t")])
        let run = try #require(try s.wake(target: "t", at: clock.now).runs.first?.run)
        let end = s.handlerEnded(runID: run.id, termination: termination, at: clock.at(seconds: 1))
        #expect(end.endedRun?.outcome == expected)
        #expect(end.endedRun?.termination == termination)
        #expect(end.endedRun?.cancelReason == nil)
    }

    @Test("a handler that ends after the budget's cancellation but before its end has expired")
    mutating func expired() throws {
        var s = scheduler([commandTask("t", budget: 10, grace: 4)])
        let run = try #require(try s.wake(target: "t", at: clock.now).runs.first?.run)
        _ = s.advance(to: clock.at(seconds: 6))
        let end = s.handlerEnded(runID: run.id, termination: .exited(143), at: clock.at(seconds: 6.2))
        #expect(end.trace == ["ended:expired"])
        #expect(end.endedRun?.cancelReason == .budget)
        #expect(s.nextDeadline == nil)
    }

    @Test("a Swift handler still running at the budget's end is abandoned at once, and its late result is fenced")
    mutating func swiftAbandoned() throws {
        var s = scheduler([swiftTask("swifty", budget: 10, grace: 2)])
        let run = try #require(try s.wake(target: "swifty", at: clock.now).runs.first?.run)
        #expect(s.advance(to: clock.at(seconds: 8)).trace == ["cancel", "cancelling"])
        let kill = s.advance(to: clock.at(seconds: 10))
        #expect(kill.trace == ["kill", "killing", "ended:killed"])
        #expect(kill.endedRun?.termination == nil)
        #expect(s.runs.isEmpty)
        // The abandoned task returns later: nothing changes.
        #expect(s.handlerEnded(runID: run.id, termination: .returned, at: clock.at(seconds: 12)).isEmpty)
        #expect(s.tasks[run.key]?.lastRun?.outcome == .killed)
    }

    @Test("a trigger that finds a run in progress joins it (coalesce)")
    mutating func coalescing() throws {
        var s = scheduler([commandTask("t")])
        let first = try s.wake(target: "t", at: clock.now)
        let second = try s.wake(target: "t", at: clock.at(seconds: 1))
        #expect(second.actions.trace == ["coalesced"])
        #expect(second.runs.first?.coalesced == true)
        #expect(second.runs.first?.run.id == first.runs.first?.run.id)
        #expect(s.runs.count == 1)
        // Once it ended, the next wake starts a new run.
        _ = s.handlerEnded(runID: first.runs[0].run.id, termination: .exited(0), at: clock.at(seconds: 2))
        let third = try s.wake(target: "t", at: clock.at(seconds: 3))
        #expect(third.actions.trace == ["start", "started"])
        #expect(third.runs[0].run.id != first.runs[0].run.id)
    }

    @Test("taskctl cancel: the kill signal now, the hard stop one grace later, outcome cancelled either way")
    mutating func cancelRequested() throws {
        var s = scheduler([commandTask("t", budget: 60, grace: 3)])
        let run = try #require(try s.wake(target: "t", at: clock.now).runs.first?.run)
        let (cancelled, actions) = try s.cancel(target: "t", at: clock.at(seconds: 10))
        #expect(actions.trace == ["cancel", "cancelling"])
        #expect(cancelled.first?.killAt == clock.now.monotonic + 13_000_000)
        #expect(s.advance(to: clock.at(seconds: 13)).trace == ["kill", "killing"])
        let end = s.handlerEnded(runID: run.id, termination: .signaled(9), at: clock.at(seconds: 13.1))
        #expect(end.endedRun?.outcome == .cancelled)
        #expect(end.endedRun?.cancelReason == .requested)
        // Cancelling an idle task signals nothing.
        #expect(try s.cancel(target: "t", at: clock.at(seconds: 14)).runs.isEmpty)
    }

    @Test("OnStartupSec elapses once after the daemon's start; OnUnitActiveSec counts from the last start")
    mutating func timers() throws {
        var s = scheduler([commandTask("t", budget: 5, grace: 1, onStartup: [10], onUnitActive: [60])])
        let key = TaskKey(kind: "appRefresh", identifier: "t")
        #expect(s.nextDeadline == clock.now.monotonic + 10_000_000)
        #expect(s.advance(to: clock.at(seconds: 9)).isEmpty)
        let fired = s.advance(to: clock.at(seconds: 10))
        #expect(fired.trace == ["start", "started"])
        guard case .start(let run) = fired[0] else { return #expect(Bool(false)) }
        #expect(run.trigger == .startup)
        _ = s.handlerEnded(runID: run.id, termination: .exited(0), at: clock.at(seconds: 11))
        #expect(s.tasks[key]?.nextElapse == clock.now.monotonic + 70_000_000)
        let periodic = s.advance(to: clock.at(seconds: 70))
        guard case .start(let second) = periodic.first else { return #expect(Bool(false)) }
        #expect(second.trigger == .timer)
        // That run overruns its 5 s budget and is never reaped: the elapse at 130 s coalesces into it.
        let during = s.advance(to: clock.at(seconds: 130))
        #expect(during.trace == ["cancel", "cancelling", "kill", "killing", "coalesced"])
        #expect(s.tasks[key]?.nextElapse == clock.at(seconds: 190).monotonic)
    }

    @Test("a timer that elapses during a run coalesces into it and re-arms from the trigger")
    mutating func timerCoalesces() throws {
        var s = scheduler([commandTask("t", budget: 600, grace: 5, onUnitActive: [60])])
        let key = TaskKey(kind: "appRefresh", identifier: "t")
        let run = try #require(try s.wake(target: "t", at: clock.now).runs.first?.run)
        let actions = s.advance(to: clock.at(seconds: 60))
        #expect(actions.trace == ["coalesced"])
        #expect(s.tasks[key]?.nextElapse == clock.at(seconds: 120).monotonic)
        #expect(s.advance(to: clock.at(seconds: 60)).isEmpty)
        #expect(s.runs[run.id] != nil)
    }

    @Test("a task with only OnUnitActiveSec and no run yet never elapses (systemd semantics)")
    func unitActiveNeedsAStart() {
        let s = scheduler([commandTask("t", onUnitActive: [60])])
        #expect(s.nextDeadline == nil)
    }

    @Test("shutdown cancels every run with reason shutdown and starts nothing new")
    mutating func shutdown() throws {
        var s = scheduler([commandTask("a", grace: 2, onStartup: [100]), swiftTask("b", grace: 4)])
        _ = try s.wake(target: "a", at: clock.now)
        _ = try s.wake(target: "b", at: clock.now)
        let actions = s.shutdown(at: clock.at(seconds: 1))
        #expect(actions.trace == ["cancel", "cancelling", "cancel", "cancelling"])
        #expect(s.runs.values.allSatisfy { $0.cancelReason == .shutdown })
        #expect(s.nextDeadline == clock.at(seconds: 3).monotonic)
        #expect(try s.wake(target: "a", at: clock.at(seconds: 1)).runs.isEmpty)
        let late = s.advance(to: clock.at(seconds: 200))
        #expect(!late.trace.contains("start"))
        #expect(late.trace.contains("ended:cancelled"))  // the Swift run is abandoned at its hard stop
    }

    @Test("run ids are 32 hex digits from the injected random source, so a seed reproduces them")
    mutating func runIDs() throws {
        var a = scheduler([commandTask("t")])
        var b = scheduler([commandTask("t")])
        let idA = try #require(try a.wake(target: "t", at: clock.now).runs.first?.run.id)
        let idB = try #require(try b.wake(target: "t", at: clock.now).runs.first?.run.id)
        #expect(idA == idB)
        #expect(idA.count == 32 && idA.allSatisfy(\.isHexDigit))
    }

    @Test("a wake of a kind starts every task of that kind")
    mutating func wakeKind() throws {
        var s = scheduler([commandTask("a"), commandTask("b"), commandTask("c", kind: "processing")])
        let (runs, _) = try s.wake(target: "appRefresh", at: clock.now)
        #expect(runs.map(\.run.key.identifier).sorted() == ["a", "b"])
    }
}
