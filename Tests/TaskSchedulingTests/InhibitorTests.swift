import Testing

@testable import TaskScheduling

/// logind's inhibitor locks as the scheduler's actions, on a manual clock: the delay lock from the
/// first start on (`WatchSleep=`), let go while the system sleeps once no run delays it and taken
/// again at resume; the block lock while a `Sleep=block` run is active.
@Suite("Scheduler: sleep inhibitors")
struct InhibitorTests {
    let keyA = TaskKey(kind: "appRefresh", identifier: "a")

    /// Tasks `a` and `c` (`Sleep=cancel`), `b` and `d` (`Sleep=block`).
    func scheduler(watchesSleep: Bool = true) -> (Scheduler, ManualClock) {
        let clock = ManualClock()
        var b = commandTask("b")
        var d = commandTask("d")
        b.sleep = .block
        d.sleep = .block
        let s = Scheduler(
            definitions: [commandTask("a"), b, commandTask("c"), d], startedAt: clock.now,
            random: SeededRandom(seed: 3), watchesSleep: watchesSleep)
        return (s, clock)
    }

    @Test("the delay lock is taken when the first run starts, not before, and once")
    func delayAtFirstStart() throws {
        var (s, clock) = scheduler()
        #expect(s.prepareForSleep(maxDelay: 5_000_000, at: clock.now).isEmpty, "nothing held, nothing to let go")
        #expect(s.resumed(at: clock.now).isEmpty, "a lock never taken is not taken at resume")
        // A paused task's trigger starts nothing: still no lock.
        _ = try s.pause(target: "a", until: nil, note: "", at: clock.now)
        #expect(!s.wakeOne("a", at: clock.now).trace.contains { $0.hasPrefix("inhibit") })
        let first = s.wakeOne("c", at: clock.advance(seconds: 1))
        #expect(first.trace == ["start", "started", "inhibit:delay"])
        #expect(s.inhibitors.held == [.delay])
        _ = s.handlerEnded(runID: first.run.id, termination: .exited(0), at: clock.advance(seconds: 1))
        #expect(!s.wakeOne("c", at: clock.now).trace.contains("inhibit:delay"), "taken once")
    }

    @Test("without WatchSleep= no lock is ever taken, and sleep and resume are harmless")
    func noWatch() {
        var (s, clock) = scheduler(watchesSleep: false)
        let c = s.wakeOne("c", at: clock.now)
        let b = s.wakeOne("b", at: clock.now)
        var traces = c.trace + b.trace + s.prepareForSleep(maxDelay: 5_000_000, at: clock.advance(seconds: 1)).trace
        for run in [c.run, b.run] {
            traces += s.handlerEnded(runID: run.id, termination: .exited(0), at: clock.advance(seconds: 1)).trace
        }
        traces += s.resumed(at: clock.advance(seconds: 1)).trace
        #expect(traces.contains("start") && !traces.contains { $0.hasPrefix("inhibit") || $0.hasPrefix("release") })
        #expect(s.inhibitors.held.isEmpty && s.activeCount == 0)
    }

    @Test("asleep: the delay lock goes when the last run sleep waits for ends, and comes back at resume")
    func delayReleasedAtLastEnd() {
        var (s, clock) = scheduler()
        let a = s.wakeOne("a", at: clock.now).run
        let c = s.wakeOne("c", at: clock.now).run
        let sleep = s.prepareForSleep(maxDelay: 5_000_000, at: clock.advance(seconds: 1))
        #expect(sleep.trace == ["cancel", "cancelling", "cancel", "cancelling"], "two runs still delay it")
        let first = s.handlerEnded(runID: a.id, termination: .signaled(15), at: clock.advance(seconds: 1))
        #expect(!first.trace.contains("release:delay"))
        let last = s.handlerEnded(runID: c.id, termination: .signaled(15), at: clock.advance(seconds: 1))
        #expect(last.trace == ["ended:cancelled", "release:delay"])
        #expect(s.inhibitors.held.isEmpty)
        let woke = s.resumed(at: clock.advance(seconds: 1))
        #expect(woke.trace.filter { $0 == "inhibit:delay" }.count == 1)
        #expect(s.inhibitors.held == [.delay])
    }

    @Test("asleep with nothing running: PrepareForSleep lets the delay lock go at once")
    func delayReleasedAtOnce() {
        var (s, clock) = scheduler()
        let c = s.wakeOne("c", at: clock.now).run
        _ = s.handlerEnded(runID: c.id, termination: .exited(0), at: clock.advance(seconds: 1))
        #expect(s.prepareForSleep(maxDelay: 5_000_000, at: clock.advance(seconds: 1)).trace == ["release:delay"])
        // A wake while asleep starts nothing and takes nothing back.
        #expect(s.wakeOne("c", at: clock.now).trace == ["waiting"])
        let woke = s.resumed(at: clock.advance(seconds: 1))
        #expect(woke.trace == ["start", "started", "inhibit:delay"])
    }

    @Test("Sleep=block: the block lock is held from the first such run's start to the last one's end")
    func blockFollowsBlockRuns() {
        var (s, clock) = scheduler()
        let b = s.wakeOne("b", at: clock.now)
        #expect(b.trace == ["start", "started", "inhibit:delay", "inhibit:block"])
        let d = s.wakeOne("d", at: clock.now)
        #expect(d.trace == ["start", "started"], "already held")
        let a = s.wakeOne("a", at: clock.now)
        #expect(a.trace == ["start", "started"], "a Sleep=cancel run takes no block lock")
        // Block runs do not delay sleep: once the cancelled run ends, the delay lock goes.
        #expect(
            s.prepareForSleep(maxDelay: 5_000_000, at: clock.advance(seconds: 1)).trace == ["cancel", "cancelling"])
        let aEnd = s.handlerEnded(runID: a.run.id, termination: .signaled(15), at: clock.now)
        #expect(aEnd.trace == ["ended:cancelled", "release:delay"])
        #expect(s.inhibitors.held == [.block] && s.runsBlockSleep)
        let bEnd = s.handlerEnded(runID: b.run.id, termination: .exited(0), at: clock.advance(seconds: 1))
        #expect(!bEnd.trace.contains("release:block"), "d still runs")
        let dEnd = s.handlerEnded(runID: d.run.id, termination: .exited(0), at: clock.advance(seconds: 1))
        #expect(dEnd.trace == ["ended:completed", "release:block"])
        #expect(!s.runsBlockSleep && s.inhibitors.held.isEmpty)
    }

    @Test("a block run cut by a reload or cancel still holds the lock until it has ended")
    func blockUntilTheEnd() throws {
        var (s, clock) = scheduler()
        let b = s.wakeOne("b", at: clock.now).run
        let removed = s.reload([commandTask("a")], maxConcurrentRuns: 4, at: clock.advance(seconds: 1)).actions
        #expect(removed.trace == ["cancel", "cancelling"], "no release while it runs")
        #expect(s.runsBlockSleep)
        let ended = s.handlerEnded(runID: b.id, termination: .signaled(15), at: clock.advance(seconds: 1))
        #expect(ended.trace.last == "release:block")
    }
}

/// The cancel funnel: whatever cancels a run, and however often, it is signalled once, keeps its
/// first reason, and its hard stop only ever moves earlier; a queued run ends once.
@Suite("Scheduler: one cancel funnel")
struct CancelFunnelTests {
    @Test("a run is cancelled once, whatever cancels it next")
    func cancelledOnce() throws {
        let clock0 = ManualClock()
        var clock = clock0
        var a = commandTask("a", budget: 30, grace: 10)
        a.conditions = [.acPower]
        a.conditionLost = .cancel
        var s = Scheduler(definitions: [a], startedAt: clock.now, random: SeededRandom(seed: 4), watchesSleep: true)
        let run = s.wakeOne("a", at: clock.now).run
        var actions = s.advance(to: clock.advance(seconds: 20))  // budget − grace: cancellation signalled
        #expect(s.runs[run.id]?.cancelReason == .budget)
        let killAt = s.runs[run.id]!.killAt
        #expect(killAt == clock0.now.monotonic + 30_000_000)
        actions += s.conditionsChanged(unheld: [.acPower], at: clock.advance(seconds: 1))
        actions += s.prepareForSleep(maxDelay: 5_000_000, at: clock.advance(seconds: 1))
        #expect(s.runs[run.id]!.killAt == killAt, "sleep leaves a run already cancelling to its hard stop")
        actions += s.resumed(at: clock.advance(seconds: 1))
        actions += try s.cancel(target: run.id, at: clock.now).actions
        actions += try s.cancel(target: "a", at: clock.now).actions
        actions += s.reload([], maxConcurrentRuns: 4, at: clock.now).actions
        actions += s.shutdown(at: clock.now)
        let signalled = actions.filter { if case .cancel(let r) = $0 { r.id == run.id } else { false } }
        #expect(signalled.count == 1, "\(actions.trace)")
        #expect(actions.trace.filter { $0 == "cancelling" }.count == 1)
        #expect(s.runs[run.id]?.cancelReason == .budget, "the first reason stays")
        #expect(s.runs[run.id]!.killAt <= killAt, "never later")
        actions = s.handlerEnded(runID: run.id, termination: .signaled(15), at: clock.advance(seconds: 1))
        #expect(actions.endedRun?.outcome == .expired)
    }

    @Test("a queued run cancelled again is not ended twice")
    func queuedEndsOnce() throws {
        let clock = ManualClock()
        var a = commandTask("a")
        a.overlap = .queue
        var s = Scheduler(definitions: [a], startedAt: clock.now, random: SeededRandom(seed: 5))
        let key = TaskKey(kind: "appRefresh", identifier: "a")
        let first = s.wake(key: key, payload: "1", at: clock.now).result!.run
        let queued = s.wake(key: key, payload: "2", at: clock.now).actions
        #expect(queued.trace == ["queued"])
        let queuedID = try #require(s.tasks[key]?.queue.first)
        var actions = try s.cancel(target: queuedID, at: clock.now).actions
        #expect(throws: TargetError.self, "it has ended: its id names nothing now") {
            try s.cancel(target: queuedID, reason: .removed, at: clock.now)
        }
        actions += try s.cancel(target: "a", reason: .removed, at: clock.now).actions
        actions += s.shutdown(at: clock.now)
        let ends = actions.compactMap { if case .report(.ended(let r)) = $0, r.id == queuedID { r } else { nil } }
        #expect(ends.count == 1 && ends.first?.cancelReason == .requested)
        #expect(s.runs[first.id]?.cancelReason == .removed)
        #expect(actions.filter { if case .cancel(let r) = $0 { r.id == first.id } else { false } }.count == 1)
    }

    @Test("the active counts kept as runs start and end match the runs")
    func countsMatchTheRuns() throws {
        var clock = ManualClock()
        var b = commandTask("b")
        b.sleep = .block
        var defs = [b] + (0..<6).map { commandTask("t\($0)", budget: 5, grace: 1) }
        defs[1].overlap = .queue
        var s = Scheduler(
            definitions: defs, startedAt: clock.now, random: SeededRandom(seed: 6), maxConcurrentRuns: 3,
            watchesSleep: true)
        func check() {
            let active = s.runs.values.filter(\.isActive)
            #expect(s.activeCount == active.count)
            #expect(s.runsDelayingSleep == active.filter { !$0.blocksSleep }.count)
            #expect(s.runsBlockSleep == active.contains { $0.blocksSleep })
        }
        for name in ["b", "t0", "t0", "t1", "t2", "t3", "t4", "t5"] { _ = s.wakeOne(name, at: clock.now) }
        check()
        _ = try s.cancel(target: "t1", at: clock.advance(seconds: 1))
        check()
        _ = s.advance(to: clock.advance(seconds: 5))  // budgets end: cancelled, then killed
        check()
        for run in s.runs.values.sorted(by: { $0.id < $1.id }) where run.isActive {
            _ = s.handlerEnded(runID: run.id, termination: .signaled(9), at: clock.advance(seconds: 1))
            check()
        }
        _ = s.shutdown(at: clock.now)
        check()
    }
}
