import Testing

@testable import TaskScheduling

/// System sleep on a manual clock: runs are cancelled before it within logind's delay, `Sleep=block`
/// runs are left alone, nothing starts while asleep, and at resume the cut runs run again and
/// timers catch up what the sleep made them miss.
@Suite("Scheduler: system sleep and resume")
struct SleepTests {
    let keyA = TaskKey(kind: "appRefresh", identifier: "a")
    let keyB = TaskKey(kind: "appRefresh", identifier: "b")

    func scheduler(blockB: Bool = false) -> (Scheduler, ManualClock) {
        let clock = ManualClock()
        var b = commandTask("b", grace: 10)
        if blockB { b.sleep = .block }
        let s = Scheduler(
            definitions: [commandTask("a", grace: 10), b, commandTask("c")], startedAt: clock.now,
            random: SeededRandom(seed: 2))
        return (s, clock)
    }

    @Test("PrepareForSleep: running runs are cancelled (sleep), their hard stop within 9/10 of the delay")
    func cancelsWithinTheDelay() {
        var (s, clock) = scheduler()
        let a = s.wake(key: keyA, payload: "{\"n\":1}", at: clock.now).result!.run
        #expect(s.runsDelayingSleep == 1)
        let sleep = s.prepareForSleep(maxDelay: 5_000_000, at: clock.advance(seconds: 1))
        #expect(sleep.trace == ["cancel", "cancelling"])
        #expect(s.runs[a.id]?.cancelReason == .sleep)
        #expect(s.runs[a.id]?.killAt == clock.now.monotonic + 4_500_000, "the grace (10 s) bounded by logind's 5 s")
        // A wake meanwhile waits: nothing starts while the system goes to sleep.
        let c = s.wakeOne("c", at: clock.now)
        #expect(!c.trace.contains("start"))
        let ended = s.handlerEnded(runID: a.id, termination: .signaled(15), at: clock.advance(seconds: 1))
        #expect(ended.trace.first == "ended:cancelled")
        #expect(s.runsDelayingSleep == 0, "the delay inhibitor may go now")
    }

    @Test("resume: the cut run runs again (trigger resume, its payload), and what waited starts")
    func resumeRunsAgain() {
        var (s, clock) = scheduler()
        let a = s.wake(key: keyA, payload: "{\"n\":1}", at: clock.now).result!.run
        _ = s.prepareForSleep(maxDelay: 5_000_000, at: clock.now)
        _ = s.wakeOne("c", at: clock.now)
        _ = s.handlerEnded(runID: a.id, termination: .signaled(15), at: clock.advance(seconds: 1))
        // Asleep for 8 hours: the wall clock moves, CLOCK_MONOTONIC does not.
        let woke = ClockReading(
            monotonic: clock.now.monotonic + 1_000_000, realtime: clock.now.realtime + 8 * 3_600_000_000)
        let resumed = s.resumed(at: woke)
        #expect(resumed.trace.filter { $0 == "start" }.count == 2)
        let again = s.runs.values.first { $0.key == keyA }
        #expect(again?.trigger == .resume && again?.payload == "{\"n\":1}" && again?.previousAttemptID == a.id)
        #expect(s.runs.values.contains { $0.key.identifier == "c" && $0.state == .running })
    }

    @Test("a run that finished its work despite the cancel is not run again")
    func completedIsNotRunAgain() {
        var (s, clock) = scheduler()
        let a = s.wake(key: keyA, at: clock.now).result!.run
        _ = s.prepareForSleep(maxDelay: 5_000_000, at: clock.now)
        _ = s.handlerEnded(runID: a.id, termination: .exited(0), at: clock.advance(seconds: 1))
        #expect(s.resumed(at: clock.advance(seconds: 1)).isEmpty)
    }

    @Test("Sleep=block: the run is not cancelled and holds sleep back; the others are")
    func block() {
        var (s, clock) = scheduler(blockB: true)
        let a = s.wake(key: keyA, at: clock.now).result!.run
        let b = s.wake(key: keyB, at: clock.now).result!.run
        #expect(s.runsBlockSleep)
        let sleep = s.prepareForSleep(maxDelay: 5_000_000, at: clock.now)
        #expect(sleep.trace == ["cancel", "cancelling"])
        #expect(s.runs[a.id]?.cancelReason == .sleep && s.runs[b.id]?.phase == .running)
        _ = s.handlerEnded(runID: a.id, termination: .signaled(15), at: clock.advance(seconds: 1))
        #expect(s.runsDelayingSleep == 0, "the block run does not delay: it blocks")
        _ = s.handlerEnded(runID: b.id, termination: .exited(0), at: clock.advance(seconds: 1))
        #expect(!s.runsBlockSleep)
    }

    @Test("resume: a calendar elapse slept through is caught up as CatchUp= says")
    func calendarCatchUp() throws {
        for (policy, expected) in [(CatchUpPolicy.latest, 1), (.all, 8), (.none, 0)] {
            let clock = ManualClock()  // 2026-01-01 00:00 UTC
            var d = TaskDefinition(
                key: keyA, budget: .seconds(60), onCalendar: [try CalendarSpec(parsing: "*-*-* *:30:00 UTC")],
                handler: .command(CommandSpec(argv: ["/bin/true"])))
            d.catchUp = policy
            d.overlap = .queue
            d.queueLimit = 100
            var s = Scheduler(definitions: [d], startedAt: clock.now, random: SeededRandom(seed: 1))
            _ = s.prepareForSleep(maxDelay: 5_000_000, at: clock.now)
            let woke = ClockReading(
                monotonic: clock.now.monotonic + 2_000_000, realtime: clock.now.realtime + 8 * 3_600_000_000)
            _ = s.resumed(at: woke)
            let actions = s.advance(to: woke)
            let runs = s.runs.values.filter { $0.trigger == .catchup }
            #expect(runs.count == expected, "\(policy): \(actions.trace)")
            if policy == .latest { #expect(runs.first?.scheduledRealtime == woke.realtime - 1_800_000_000) }
            #expect(s.tasks[keyA]?.calendarDueRealtime == woke.realtime + 1_800_000_000, "\(policy)")
        }
    }
}
