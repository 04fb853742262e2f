import Synchronization
import Taskd
import TaskdTesting
import Testing

/// The paths a handler takes in taskd, followed in the test kit on its manual clock: timers that
/// fire as the clock moves, conditions, system sleep, `scheduleNext`, retries to the last attempt.
@Suite("TaskdTesting: timers, conditions, sleep and retries on the manual clock")
struct TaskTestDriverPathsTests {
    @Test("a calendar task runs when its time comes, not before")
    func calendar() async throws {
        let daemon = TaskDaemon().backgroundTask(.processing("nightly"), schedule: [.calendar("*-*-* 03:00:00 UTC")]) {
            _ in
        }
        let driver = TaskTestDriver(daemon)
        await driver.advance(by: .seconds(3 * 3600 - 1))
        #expect(driver.runs(of: "nightly").isEmpty)
        await driver.advance(by: .seconds(1))
        let runs = driver.runs(of: "nightly")
        #expect(runs.count == 1 && runs.first?.trigger == .timer)
        #expect(await runs.first?.finish().outcome == .completed)
    }

    @Test("an every: task runs one interval after start, then one interval after each start")
    func every() async throws {
        let daemon = TaskDaemon().backgroundTask(.appRefresh("poll"), every: .seconds(900)) { _ in }
        let driver = TaskTestDriver(daemon)
        await driver.advance(by: .seconds(899))
        #expect(driver.runs(of: "poll").isEmpty)
        await driver.advance(by: .seconds(1))
        _ = await driver.runs(of: "poll").first?.finish()
        await driver.advance(by: .seconds(900))
        let runs = driver.runs(of: "poll")
        #expect(runs.map(\.trigger) == [.startup, .timer])
    }

    @Test("a run whose condition does not hold waits, and starts when it holds")
    func conditionWaits() async throws {
        let daemon = TaskDaemon().backgroundTask(.processing("backup"), requires: [.acPower]) { _ in }
        let driver = TaskTestDriver(daemon)
        await driver.setUnmet([.acPower])
        let run = try await driver.wake("backup")
        await driver.advance(by: .seconds(3600))
        #expect(await run.result == nil && !run.isRunning, "it waits for AC power")
        await driver.setUnmet([])
        #expect(await run.finish().outcome == .completed)
    }

    @Test("giveUpAfter: a run that waited that long for its condition is cancelled, condition-timeout")
    func giveUp() async throws {
        let daemon = TaskDaemon().backgroundTask(
            .processing("sync"), requires: [.network, .giveUpAfter(.seconds(600))]
        ) { _ in }
        let driver = TaskTestDriver(daemon)
        await driver.setUnmet([.network])
        let run = try await driver.wake("sync")
        await driver.advance(by: .seconds(600))
        let ended = await run.finish()
        #expect(ended.outcome == .cancelled && ended.cancelReason == .conditionTimeout)
    }

    @Test("system sleep cancels a run (onCancel runs, reason sleep); it runs again at resume")
    func sleep() async throws {
        let cancelled = Mutex(0)
        let daemon = TaskDaemon().backgroundTask(.processing("upload"), budget: .seconds(600)) { context in
            guard context.trigger != .resume else { return }
            try await withTaskCancellationHandler {
                try await Task.sleep(for: .seconds(3600))
            } onCancel: {
                cancelled.withLock { $0 += 1 }
            }
        }
        let driver = TaskTestDriver(daemon)
        let run = try await driver.wake("upload", payloadJSON: "42")
        await driver.systemSleeps()
        let ended = await run.finish()
        #expect(ended.outcome == .cancelled && ended.cancelReason == .sleep)
        #expect(cancelled.withLock { $0 } == 1)
        await driver.systemResumes()
        let again = driver.runs(of: "upload")
        #expect(again.map(\.trigger) == [.wake, .resume])
        #expect(await again.last?.finish().outcome == .completed)
    }

    @Test("scheduleNext(after:) starts the next run when its time comes, as a timer")
    func scheduleNext() async throws {
        let daemon = TaskDaemon().backgroundTask(.appRefresh("feed")) { context in
            if context.trigger == .wake { context.scheduleNext(after: .seconds(600)) }
        }
        let driver = TaskTestDriver(daemon)
        _ = try await driver.wake("feed").finish()
        await driver.advance(by: .seconds(599))
        #expect(driver.runs(of: "feed").count == 1)
        await driver.advance(by: .seconds(1))
        let runs = driver.runs(of: "feed")
        #expect(runs.map(\.trigger) == [.wake, .timer])
        #expect(await runs.last?.finish().outcome == .completed)
    }

    @Test("a failing task is retried after its backoff to the last attempt, which is not retried")
    func retriesToTheEnd() async throws {
        struct Down: Error {}
        let daemon = TaskDaemon().backgroundTask(.appRefresh("fetch"), maxAttempts: 3) { _ in throw Down() }
        let driver = TaskTestDriver(daemon)
        var ended = try await driver.wake("fetch").finish()
        var attempts = [1]
        while let delay = ended.retryAfter {
            await driver.advance(by: delay)
            guard let next = driver.runs(of: "fetch").last, next.attempt > attempts.last! else { break }
            attempts.append(next.attempt)
            ended = await next.finish()
        }
        #expect(attempts == [1, 2, 3])
        #expect(ended.outcome == .failed && ended.retryAfter == nil)
        #expect(driver.runs(of: "fetch").map(\.trigger) == [.wake, .retry, .retry])
    }
}
