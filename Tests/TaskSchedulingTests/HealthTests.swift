import Testing

@testable import TaskScheduling

/// Overdue and failing alerts, pauses and chained wakes on a manual clock.
@Suite("Scheduler: alerts, pauses and chained wakes")
struct HealthTests {
    let job = TaskKey(kind: "appRefresh", identifier: "job")
    let alert = TaskKey(kind: "appRefresh", identifier: "alert")
    let hour: UInt64 = 3_600_000_000

    func scheduler(_ configure: (inout TaskDefinition) -> Void = { _ in }) -> (Scheduler, ManualClock) {
        var job = commandTask("job")
        configure(&job)
        let clock = ManualClock()
        return (
            Scheduler(definitions: [job, commandTask("alert")], startedAt: clock.now, random: SeededRandom(seed: 9)),
            clock
        )
    }

    func alerts(_ actions: [SchedulerAction]) -> [String] { actions.trace.filter { $0.hasPrefix("alert:") } }

    /// Wakes `key` and ends its run with `termination`; returns the end's actions.
    func run(_ s: inout Scheduler, _ key: TaskKey, _ termination: Termination, at now: ClockReading)
        -> [SchedulerAction]
    {
        let run = s.wake(key: key, at: now).result!.run
        return s.handlerEnded(runID: run.id, termination: termination, at: now)
    }

    @Test("ExpectSuccessWithinSec=: overdue once at the deadline, recovered by the next completed run")
    func overdue() {
        var (s, clock) = scheduler { $0.expectSuccessWithin = .seconds(3600) }
        #expect(s.nextDeadline == clock.now.monotonic + hour)
        #expect(alerts(s.advance(to: clock.advance(seconds: 3599))).isEmpty)
        #expect(alerts(s.advance(to: clock.advance(seconds: 1))) == ["alert:overdue"])
        #expect(s.health(of: job).overdue && s.nextDeadline == nil)
        #expect(alerts(s.advance(to: clock.advance(seconds: 3600))).isEmpty, "said once")
        let ended = run(&s, job, .exited(0), at: clock.advance(seconds: 1))
        #expect(alerts(ended) == ["alert:recovered:overdue"])
        #expect(!s.health(of: job).overdue && s.health(of: job).lastSuccess == clock.now.realtime)
        #expect(s.nextDeadline == clock.now.monotonic + hour, "counts again from the success")
    }

    @Test("AlertAfterFailures=: the failing alert at the Nth failure in a row, once; a success recovers")
    func failing() {
        var (s, clock) = scheduler { $0.alertAfterFailures = 2 }
        #expect(alerts(run(&s, job, .exited(1), at: clock.now)).isEmpty)
        #expect(alerts(run(&s, job, .exited(1), at: clock.advance(seconds: 1))) == ["alert:failing:2"])
        #expect(alerts(run(&s, job, .exited(1), at: clock.advance(seconds: 1))).isEmpty)
        #expect(s.health(of: job).consecutiveFailures == 3)
        #expect(alerts(run(&s, job, .exited(0), at: clock.advance(seconds: 1))) == ["alert:recovered:failing"])
        #expect(s.health(of: job).consecutiveFailures == 0)
    }

    @Test("a failure that is retried does not count; the retry's own failure does")
    func retriedDoesNotCount() {
        var (s, clock) = scheduler {
            $0.retry.maxAttempts = 2
            $0.alertAfterFailures = 1
        }
        let first = run(&s, job, .exited(1), at: clock.now)
        #expect(alerts(first).isEmpty && s.health(of: job).consecutiveFailures == 0)
        let retry = s.advance(to: clock.advance(seconds: 60))
        guard case .start(let r)? = retry.first(where: { if case .start = $0 { true } else { false } }) else {
            return #expect(Bool(false), "the retry starts")
        }
        #expect(alerts(s.handlerEnded(runID: r.id, termination: .exited(1), at: clock.now)) == ["alert:failing:1"])
    }

    @Test("pause: wakes and timers are recorded as cancelled runs (reason paused), not run; resume runs them again")
    func pause() throws {
        var (s, clock) = scheduler { $0.onUnitActive = [.seconds(60)] }
        let (keys, paused) = try s.pause(target: "job", until: nil, note: "maintenance", at: clock.now)
        #expect(keys == [job] && alerts(paused) == ["alert:paused"] && s.isPaused(job))
        let wake = s.wake(key: job, at: clock.now)
        #expect(wake.result?.disposition == .paused && wake.result?.run.cancelReason == .paused)
        #expect(wake.actions.trace == ["ended:cancelled"], "recorded, not started")
        #expect(s.runs.isEmpty)
        let (resumed, actions) = try s.resume(target: "job", at: clock.advance(seconds: 1))
        #expect(resumed == [job] && alerts(actions) == ["alert:resumed"])
        #expect(s.wake(key: job, at: clock.now).actions.trace == ["start", "started"])
    }

    @Test("pause --until: the task resumes by itself when it ends; a pause is restored at start")
    func timedPause() throws {
        var (s, clock) = scheduler()
        let until = clock.now.realtime + hour
        _ = try s.pause(target: "job", until: until, note: "", at: clock.now)
        #expect(s.nextDeadline == clock.now.monotonic + hour)
        #expect(alerts(s.advance(to: clock.advance(seconds: 3600))) == ["alert:resumed"])
        #expect(!s.isPaused(job))

        var kept = TaskHealth()
        kept.pause = TaskPause(since: clock.now.realtime, note: "kept")
        let restarted = Scheduler(
            definitions: [commandTask("job")], startedAt: clock.now, random: SeededRandom(seed: 1),
            persistedHealth: [job: kept])
        #expect(restarted.isPaused(job) && restarted.health(of: job).pause?.note == "kept")
    }

    @Test("PauseAfterFailures=: the task pauses itself after N failures in a row, and says why")
    func pauseAfterFailures() {
        var (s, clock) = scheduler { $0.pauseAfterFailures = 2 }
        _ = run(&s, job, .exited(1), at: clock.now)
        let second = run(&s, job, .exited(1), at: clock.advance(seconds: 1))
        #expect(alerts(second) == ["alert:paused"])
        #expect(s.isPaused(job) && s.health(of: job).pause?.note == "PauseAfterFailures=2: 2 failures in a row")
    }

    @Test("OnFailure=, OnSuccess=: the named task is woken with the run's id and outcome in its payload")
    func chains() {
        var (s, clock) = scheduler {
            $0.onFailure = ["alert"]
            $0.onSuccess = ["alert"]
        }
        let failed = run(&s, job, .exited(3), at: clock.now)
        let woken = failed.compactMap { action -> Run? in
            if case .start(let r) = action, r.key == alert { return r }
            return nil
        }
        #expect(woken.count == 1, "the failure wakes alert once")
        let payload = woken.first?.payload ?? ""
        #expect(payload.contains(#""outcome":"failed""#) && payload.contains(#""task":"job""#))
        #expect(payload.contains(#""runId":""#))
    }

    @Test("a chain carries the result: a command's RESULT= (recorded while it runs) and a handler's return value")
    func chainsCarryTheResult() throws {
        var (s, clock) = scheduler { $0.onSuccess = ["alert"] }
        let first = try #require(s.wake(key: job, at: clock.now).result?.run)
        s.recordResult(runID: first.id, #"{"rows":1}"#)
        s.recordResult(runID: first.id, #"{"rows":1200}"#)
        let woken = s.handlerEnded(runID: first.id, termination: .exited(0), at: clock.now).compactMap {
            action -> Run? in
            if case .start(let r) = action, r.key == alert { return r }
            return nil
        }
        #expect(woken.first?.payload?.hasSuffix(#""outcome":"completed","result":{"rows":1200}}"#) == true)
        #expect(s.tasks[job]?.lastRun?.result == #"{"rows":1200}"#, "the last RESULT= is the run's")
        // A handler's own return value wins over nothing, and a nil one does not erase a RESULT=.
        let second = try #require(s.wake(key: job, at: clock.advance(seconds: 1)).result?.run)
        s.recordResult(runID: second.id, #""kept""#)
        _ = s.handlerEnded(runID: second.id, termination: .exited(0), result: nil, at: clock.now)
        #expect(s.tasks[job]?.lastRun?.result == #""kept""#)
    }

    @Test("why: paused, the run in progress, what a trigger would do, the next timer, the last result")
    func why() throws {
        var (s, clock) = scheduler { $0.onUnitActive = [.seconds(600)] }
        let run = s.wake(key: job, at: clock.now).result!.run
        var codes = s.explain(job, at: clock.now).map(\.code)
        #expect(codes.contains(.running) && codes.contains(.joinsRun) && codes.contains(.nextTimer))
        _ = s.handlerEnded(runID: run.id, termination: .exited(1), at: clock.advance(seconds: 1))
        _ = try s.pause(target: "job", until: nil, note: "disk full", at: clock.now)
        let reasons = s.explain(job, at: clock.now)
        codes = reasons.map(\.code)
        #expect(codes.first == .paused && reasons.first?.text.contains("disk full") == true)
        #expect(codes.contains(.failures) && codes.contains(.lastResult) && !codes.contains(.running))
        #expect(s.explain(alert, at: clock.now).map(\.code) == [.wakeOnly])
    }
}
