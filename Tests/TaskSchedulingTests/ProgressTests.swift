import Testing

@testable import TaskScheduling

/// Progress reports in the pure core, on a manual clock: kept at once, told at most once per
/// `progressInterval` with the last one always told, and `ProgressTimeoutSec=`.
@Suite("Scheduler: progress, its throttle and ProgressTimeoutSec=")
struct ProgressTests {
    func started(_ definition: TaskDefinition, _ clock: ManualClock) -> (Scheduler, String) {
        var scheduler = Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 3))
        let (result, _) = scheduler.wake(key: definition.key, at: clock.now)
        return (scheduler, result!.run.id)
    }

    @Test("10,000 reports in a second are kept at once but told twice: the first, then the last one after the interval")
    func throttled() {
        var clock = ManualClock()
        var (scheduler, id) = started(swiftTask("sync"), clock)
        var told: [String] = []
        for n in 1...10_000 {
            let at = clock.at(seconds: Double(n - 1) / 10_000)
            told += scheduler.progress(runID: id, completed: Int64(n), total: 10_000, status: nil, at: at).trace
            #expect(scheduler.runs[id]?.progress?.completed == Int64(n))
        }
        #expect(told == ["progress:1"])
        #expect(scheduler.nextDeadline == clock.now.monotonic + Scheduler.progressInterval)
        told += scheduler.advance(to: clock.advance(seconds: 1)).trace
        #expect(told == ["progress:1", "progress:10000"])
        #expect(scheduler.advance(to: clock.advance(seconds: 5)).trace.isEmpty, "nothing new: nothing told")
    }

    @Test("a status alone keeps the count; a count alone keeps the status; a long status is cut at 256 bytes")
    func merges() {
        let clock = ManualClock()
        var (scheduler, id) = started(swiftTask("sync"), clock)
        _ = scheduler.progress(runID: id, completed: 3, total: 250, status: nil, at: clock.now)
        _ = scheduler.progress(runID: id, completed: nil, total: nil, status: "fetching", at: clock.now)
        #expect(scheduler.runs[id]?.progress?.countText == "3/250 (1%)")
        #expect(scheduler.runs[id]?.progress?.status == "fetching")
        _ = scheduler.progress(runID: id, completed: 4, total: 250, status: nil, at: clock.now)
        #expect(scheduler.runs[id]?.progress?.status == "fetching")
        _ = scheduler.progress(
            runID: id, completed: nil, total: nil, status: String(repeating: "é", count: 200), at: clock.now)
        #expect(scheduler.runs[id]?.progress?.status?.utf8.count == 256)
    }

    @Test("ProgressTimeoutSec=: no report for that long cancels the run (reason no-progress, outcome cancelled)")
    func timeout() {
        var clock = ManualClock()
        var definition = swiftTask("stall", budget: 600, grace: 5)
        definition.progressTimeout = .seconds(60)
        var (scheduler, id) = started(definition, clock)
        #expect(scheduler.nextDeadline == clock.now.monotonic + 60_000_000)
        _ = scheduler.advance(to: clock.advance(seconds: 50))
        _ = scheduler.progress(runID: id, completed: 1, total: nil, status: nil, at: clock.now)
        #expect(scheduler.advance(to: clock.advance(seconds: 59)).trace.isEmpty, "a report restarts the count")
        let cancelled = scheduler.advance(to: clock.advance(seconds: 1))
        #expect(cancelled.trace == ["cancel", "cancelling"])
        #expect(scheduler.runs[id]?.cancelReason == .noProgress)
        let ended = scheduler.handlerEnded(runID: id, termination: .threw("CancellationError()"), at: clock.now)
        #expect(ended.trace.first == "ended:cancelled")
    }

    @Test("without ProgressTimeoutSec= a silent run goes on until its budget")
    func noTimeout() {
        var clock = ManualClock()
        var (scheduler, id) = started(swiftTask("quiet", budget: 600, grace: 5), clock)
        #expect(scheduler.advance(to: clock.advance(seconds: 594)).trace.isEmpty)
        #expect(scheduler.runs[id]?.phase == .running)
    }
}

/// "Done, partially": a handler that ends by itself, successfully, after its cancellation.
@Suite("Scheduler: a run done partially after its cancellation is not retried")
struct PartialRunTests {
    func expiredRun(_ termination: Termination) -> (Run?, [String]) {
        var clock = ManualClock()
        var definition = swiftTask("partial", budget: 30, grace: 5)
        definition.retry.maxAttempts = 3
        var scheduler = Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 5))
        let id = scheduler.wake(key: definition.key, at: clock.now).result!.run.id
        _ = scheduler.advance(to: clock.advance(seconds: 25))
        let ended = scheduler.handlerEnded(runID: id, termination: termination, at: clock.advance(seconds: 1))
        let run = ended.compactMap { action -> Run? in
            if case .report(.ended(let run)) = action { return run }
            return nil
        }.first
        return (run, ended.trace)
    }

    @Test("returned (or exit 0) after the budget's cancellation: expired, partial, no retry")
    func returnedIsPartial() {
        for termination in [Termination.returned, .exited(0)] {
            let (run, trace) = expiredRun(termination)
            #expect(run?.outcome == .expired && run?.partial == true, "\(termination)")
            #expect(!trace.contains { $0.hasPrefix("retry") }, "\(termination)")
        }
    }

    @Test("threw (or exit non-zero) after the cancellation: expired, not partial, retried per MaxAttempts=")
    func threwIsRetried() {
        for termination in [Termination.threw("CancellationError()"), .exited(143)] {
            let (run, trace) = expiredRun(termination)
            #expect(run?.outcome == .expired && run?.partial == false, "\(termination)")
            #expect(trace.contains("retry:2"), "\(termination)")
        }
    }
}

/// A retry never starts while the Swift attempt it retries, abandoned at its budget's end, still
/// runs: it waits for it, at most one CancelGraceSec=, and says so.
@Suite("Scheduler: a retry waits for its abandoned attempt")
struct AbandonedAttemptTests {
    func abandonedThenDue() -> (Scheduler, ManualClock, run: String, key: TaskKey) {
        var clock = ManualClock()
        var definition = swiftTask("slow", budget: 10, grace: 4)
        definition.retry.maxAttempts = 2
        definition.retry.backoff = .seconds(1)
        definition.retry.jitter = 0
        var scheduler = Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 2))
        let id = scheduler.wake(key: definition.key, at: clock.now).result!.run.id
        _ = scheduler.advance(to: clock.advance(seconds: 6))  // cancellation
        let killed = scheduler.advance(to: clock.advance(seconds: 4))  // budget's end: abandoned
        #expect(killed.trace == ["kill", "killing", "ended:killed", "retry:2"])
        return (scheduler, clock, id, definition.key)
    }

    @Test("due while the attempt still runs: it waits, says so, and starts one grace after the abandonment")
    func waitsUpToTheBound() {
        var (scheduler, clock, _, key) = abandonedThenDue()
        #expect(scheduler.advance(to: clock.advance(seconds: 1)).trace == ["retry-waits"])
        #expect(scheduler.tasks[key]?.retry != nil)
        #expect(scheduler.advance(to: clock.advance(seconds: 2.9)).trace.isEmpty)
        #expect(scheduler.advance(to: clock.advance(seconds: 0.1)).trace == ["start", "started"])
    }

    @Test("the attempt returns meanwhile: the retry starts then, and its late result is ignored")
    func startsWhenItReturns() {
        var (scheduler, clock, id, key) = abandonedThenDue()
        _ = scheduler.advance(to: clock.advance(seconds: 1))
        #expect(scheduler.handlerEnded(runID: id, termination: .returned, at: clock.advance(seconds: 0.5)).isEmpty)
        #expect(scheduler.nextDeadline == clock.now.monotonic)
        let started = scheduler.advance(to: clock.now)
        #expect(started.trace == ["start", "started"])
        #expect(scheduler.tasks[key]?.lastRun?.id == id, "the abandoned run stays the task's last run")
    }
}
