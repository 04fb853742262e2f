import Synchronization
import TaskdProtocol
import Testing

@testable import TaskScheduling
@testable import TaskdDaemon

/// What a client following a wake hears when its run fails and is retried.
@Suite("RunWatch: a watched run's retries")
struct RunWatchTests {
    static let clock = ClockReading(monotonic: 1_000, realtime: 2_000)

    static func run(_ id: String, attempt: Int = 1, previous: String? = nil, outcome: RunOutcome? = nil) -> Run {
        var run = Run(
            id: id, key: TaskKey(kind: "appRefresh", identifier: "flaky"), trigger: attempt > 1 ? .retry : .wake,
            attempt: attempt, queued: clock, budget: .seconds(30), cancelGrace: .seconds(5), inProcess: false)
        run.previousAttemptID = previous
        run.outcome = outcome
        return run
    }

    static func watch(followRetries: Bool = true) -> RunWatch {
        RunWatch(remaining: ["a"], notify: { _ in }, followRetries: followRetries)
    }

    @Test("a failed run's end tells its retry's delay; the retry is followed to its end")
    func followsTheRetry() {
        var w = Self.watch()
        let failed = Self.run("a", outcome: .failed)
        #expect(w.take(.retryScheduled(failed, delay: 400_000)) == nil)
        let end = w.take(.ended(failed))
        #expect(end?.state == .failed && end?.retryInUSec == 400_000 && !w.isDone)
        let retry = Self.run("b", attempt: 2, previous: "a")
        #expect(w.take(.started(retry))?.runId == "b")
        #expect(w.follows(retry) && !w.isDone)
        var done = retry
        done.outcome = .completed
        #expect(w.take(.ended(done))?.state == .completed)
        #expect(w.isDone)
    }

    @Test("a retry that starts before the failed run's end is told is still followed")
    func retryBeforeTheEndIsTold() {
        var w = Self.watch()
        let failed = Self.run("a", outcome: .failed)
        _ = w.take(.retryScheduled(failed, delay: 0))
        #expect(w.take(.started(Self.run("b", attempt: 2, previous: "a")))?.runId == "b")
        _ = w.take(.ended(failed))
        #expect(!w.isDone, "the retry is still running")
    }

    @Test("a dropped retry ends the watch with the failed run; without followRetries it ends at once")
    func droppedOrNotFollowed() {
        var w = Self.watch()
        let failed = Self.run("a", outcome: .failed)
        _ = w.take(.retryScheduled(failed, delay: 1_000_000))
        _ = w.take(.ended(failed))
        #expect(w.take(.retryDropped(failed))?.retryInUSec == nil)
        #expect(w.isDone)
        var plain = Self.watch(followRetries: false)
        #expect(plain.take(.retryScheduled(failed, delay: 1_000_000)) == nil)
        #expect(plain.take(.ended(failed))?.retryInUSec == nil)
        #expect(plain.isDone)
    }
}
