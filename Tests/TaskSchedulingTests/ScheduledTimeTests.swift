import Testing

@testable import TaskScheduling

/// `TASKD_SCHEDULED_USEC`: when each kind of trigger was due, on a manual clock.
@Suite("Scheduler: the scheduled time a run carries")
struct ScheduledTimeTests {
    func started(_ actions: [SchedulerAction]) -> Run? {
        actions.compactMap { action -> Run? in
            if case .start(let run) = action { return run }
            return nil
        }.first
    }

    @Test("a relative timer's run is scheduled at the nominal elapse, before its random delay")
    func relativeTimer() {
        var clock = ManualClock()
        var definition = commandTask("t", onStartup: [60])
        definition.randomizedDelay = .seconds(30)
        var s = Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 7))
        let nominal = clock.now.realtime + 60_000_000
        let run = started(s.advance(to: clock.advance(seconds: 90)))
        #expect(run?.trigger == .startup && run?.scheduledRealtime == nominal)
    }

    @Test("a wake is scheduled when it is acknowledged; a replayed one when it first was")
    func wakes() {
        let clock = ManualClock()
        var s = Scheduler(definitions: [commandTask("t")], startedAt: clock.now, random: SeededRandom(seed: 7))
        let key = TaskKey(kind: "appRefresh", identifier: "t")
        #expect(s.wake(key: key, at: clock.now).result?.run.scheduledRealtime == clock.now.realtime)
        var r = Scheduler(definitions: [commandTask("t")], startedAt: clock.now, random: SeededRandom(seed: 7))
        let earlier = clock.now.realtime - 5_000_000
        #expect(r.wake(key: key, acknowledged: earlier, at: clock.now).result?.run.scheduledRealtime == earlier)
    }

    @Test("a retry is scheduled at its due time")
    func retry() {
        var clock = ManualClock()
        var definition = commandTask("t")
        definition.retry.maxAttempts = 2
        definition.retry.jitter = 0
        var s = Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 7))
        let id = s.wake(key: definition.key, at: clock.now).result!.run.id
        _ = s.handlerEnded(runID: id, termination: .exited(1), at: clock.now)
        let due = clock.now.realtime + 1_000_000
        let run = started(s.advance(to: clock.advance(seconds: 1.5)))
        #expect(run?.trigger == .retry && run?.scheduledRealtime == due)
    }
}
