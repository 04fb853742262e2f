import Testing

@testable import TaskScheduling

/// `TaskContext.scheduleNext(after:)` in the pure core: a handler's request for its task's next
/// run, on a manual clock.
@Suite("Scheduler: a run the handler asks for")
struct RequestedRunTests {
    let key = TaskKey(kind: "appRefresh", identifier: "sync")

    @Test("a request fires once as a timer at its time, and is spent (persisted as gone)")
    func firesOnce() {
        var clock = ManualClock()
        var scheduler = Scheduler(definitions: [swiftTask("sync")], startedAt: clock.now, random: SeededRandom(seed: 1))
        #expect(scheduler.nextDeadline == nil)
        let asked = scheduler.requestRun(key, after: 90_000_000, at: clock.now)
        #expect(asked == [.persistRequest(key, clock.now.realtime + 90_000_000)])
        #expect(scheduler.nextDeadline == clock.now.monotonic + 90_000_000)
        #expect(scheduler.advance(to: clock.advance(seconds: 89)).isEmpty)
        let fired = scheduler.advance(to: clock.advance(seconds: 1))
        #expect(fired.trace == ["request-spent", "start", "started"])
        guard case .start(let run)? = fired.first(where: { if case .start = $0 { true } else { false } }) else {
            return #expect(Bool(false))
        }
        #expect(run.trigger == .timer)
        #expect(scheduler.tasks[key]?.requestedMonotonic == nil && scheduler.tasks[key]?.requestedRealtime == nil)
    }

    @Test("a later request replaces an earlier one")
    func replaces() {
        let clock = ManualClock()
        var scheduler = Scheduler(definitions: [swiftTask("sync")], startedAt: clock.now, random: SeededRandom(seed: 1))
        _ = scheduler.requestRun(key, after: 60_000_000, at: clock.now)
        _ = scheduler.requestRun(key, after: 600_000_000, at: clock.now)
        #expect(scheduler.nextDeadline == clock.now.monotonic + 600_000_000)
    }

    @Test("a request kept across a restart fires at its time, or at start if that passed meanwhile")
    func keptAcrossRestart() {
        let clock = ManualClock()
        let later = clock.now.realtime + 30_000_000
        let restarted = Scheduler(
            definitions: [swiftTask("sync")], startedAt: clock.now, random: SeededRandom(seed: 1),
            persistedRequests: [key: later])
        #expect(restarted.nextDeadline == clock.now.monotonic + 30_000_000)
        var missed = Scheduler(
            definitions: [swiftTask("sync")], startedAt: clock.now, random: SeededRandom(seed: 1),
            persistedRequests: [key: clock.now.realtime - 3_600_000_000])
        #expect(missed.nextDeadline == clock.now.monotonic)
        #expect(missed.advance(to: clock.now).trace == ["request-spent", "start", "started"])
    }

    @Test("a wall-clock change maps the requested time again (it is a wall-clock time)")
    func clockChange() {
        let clock = ManualClock()
        var scheduler = Scheduler(definitions: [swiftTask("sync")], startedAt: clock.now, random: SeededRandom(seed: 1))
        _ = scheduler.requestRun(key, after: 3_600_000_000, at: clock.now)
        // The wall clock jumps an hour ahead while the monotonic clock moves a second.
        let jumped = ClockReading(
            monotonic: clock.now.monotonic + 1_000_000, realtime: clock.now.realtime + 3_600_000_000)
        _ = scheduler.clockChanged(at: jumped)
        #expect(scheduler.nextDeadline == jumped.monotonic)
    }
}
