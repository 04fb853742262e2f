import Synchronization
import Taskd
import TaskdTesting
import Testing

/// The test kit itself, on handlers made to misbehave: one that ignores cancellation is
/// abandoned at the budget's end, a thrown error is retried per `maxAttempts:`.
@Suite("TaskdTesting: the test driver decides as taskd does")
struct TaskTestDriverTests {
    @Test("a handler that ignores cancellation is abandoned at the budget's end: killed")
    func killed() async throws {
        let gate = Gate()
        let daemon = TaskDaemon().backgroundTask(
            .processing("stubborn"), budget: .seconds(60), cancelGrace: .seconds(10)
        ) {
            _ in
            // Ignores cancellation: waits for a gate that opens only when the test ends.
            await gate.wait()
        }
        let run = try await TaskTestDriver(daemon).wake("stubborn")
        await run.advanceToCancellation()
        #expect(await run.result == nil, "cancellation alone does not end a run")
        await run.advanceToBudgetEnd()
        let ended = await run.finish()
        #expect(ended.outcome == .killed && ended.cancelReason == .budget)
        #expect(ended.duration == .seconds(60))
        gate.open()
    }

    @Test("a thrown error fails the run and is retried per maxAttempts:, with the backoff")
    func retried() async throws {
        struct Flaky: Error {}
        let daemon = TaskDaemon().backgroundTask(.appRefresh("flaky"), maxAttempts: 3) { _ in throw Flaky() }
        let ended = try await TaskTestDriver(daemon).wake("flaky").finish()
        #expect(ended.outcome == .failed && ended.error?.hasPrefix("threw Flaky") == true)
        #expect(ended.retryAfter != nil)
        let last = try await TaskTestDriver(daemon).start("flaky", trigger: .retry, attempt: 3).finish()
        #expect(last.outcome == .failed && last.retryAfter == nil, "the last attempt is not retried")
    }

    @Test("overlap: .allow runs wakes side by side up to .maxInstances; the next waits for one to end")
    func allowsParallelRuns() async throws {
        let gate = Gate()
        let daemon = TaskDaemon().backgroundTask(.processing("par"), requires: [.maxInstances(2)], overlap: .allow) {
            _ in await gate.wait()
        }
        let driver = TaskTestDriver(daemon)
        let first = try await driver.wake("par")
        let second = try await driver.wake("par")
        let third = try await driver.wake("par")
        #expect(first.runID != second.runID && second.runID != third.runID)
        #expect(first.isRunning && second.isRunning && !third.isRunning)
        gate.open()
        for run in [first, second, third] { #expect(await run.finish().outcome == .completed) }
    }

    @Test("a handler's context carries the trigger, attempt, wake id and payload")
    func context() async throws {
        let daemon = TaskDaemon().backgroundTask(.appRefresh("echo", payload: [String: Int].self, result: String.self))
        { context in
            "\(context.trigger) \(context.attempt) \(context.wakeID ?? "-") \(context.payload?["n"] ?? 0) \(context.budget)"
        }
        let ended = try await TaskTestDriver(daemon).wake("echo", payloadJSON: #"{"n": 7}"#, id: "w1").finish()
        #expect(try ended.result(as: String.self) == "wake 1 w1 7 30.0 seconds")
    }

    @Test("a context made by hand, for calling a handler's own functions directly")
    func handMadeContext() {
        let context = TaskContext<Int>(task: "t", payload: 5, budget: .seconds(10))
        #expect(context.payload == 5 && context.attempt == 1 && context.trigger == .wake)
        #expect(context.deadline > ContinuousClock.now)
    }

    @Test("the next run a handler asks for is in its result")
    func nextRunRequested() async throws {
        let daemon = TaskDaemon().backgroundTask(.appRefresh("poll")) { context in
            context.scheduleNext(after: .seconds(600))
        }
        let ended = try await TaskTestDriver(daemon).wake("poll").finish()
        #expect(ended.outcome == .completed && ended.nextRunRequested == .seconds(600))
    }

    @Test("a daemon whose registrations are wrong is refused, as run() would refuse it")
    func invalidRegistration() async {
        let daemon = TaskDaemon().backgroundTask(.processing("r"), schedule: [.calendar("never ever")]) { _ in }
        await #expect(throws: TestDriverError.self) { _ = try await TaskTestDriver(daemon).wake("r") }
    }

    @Test("the last progress and status a handler reports are in its result")
    func progress() async throws {
        let daemon = TaskDaemon().backgroundTask(.processing("count")) { context in
            for n in 1...500 { context.reportProgress(completed: n, total: 500) }
            context.setStatus("done counting")
        }
        let ended = try await TaskTestDriver(daemon).wake("count").finish()
        #expect(ended.progressCompleted == 500 && ended.progressTotal == 500 && ended.status == "done counting")
        #expect(ended.journal.last?["TASK_PROGRESS_COMPLETED"] == "500")
    }

    @Test("a handler that reports nothing for progressTimeout: is cancelled, reason no-progress")
    func progressTimeout() async throws {
        let daemon = TaskDaemon().backgroundTask(.processing("stall"), progressTimeout: .seconds(60)) { _ in
            try await Task.sleep(for: .seconds(3600))
        }
        let run = try await TaskTestDriver(daemon).wake("stall")
        await run.advance(by: .seconds(60))
        let ended = await run.finish()
        #expect(ended.outcome == .cancelled && ended.cancelReason == .noProgress)
    }

    @Test("a handler that catches its cancellation and returns what it has is done partially: kept, not retried")
    func partial() async throws {
        let daemon = TaskDaemon().backgroundTask(
            .processing("pages", payload: Int.self, result: Int.self), maxAttempts: 3
        ) { context in
            var fetched = 0
            while fetched < 1_000_000 {
                guard (try? await Task.sleep(for: .milliseconds(1))) != nil else { break }  // cancelled: stop
                fetched += 1
            }
            return fetched
        }
        let run = try await TaskTestDriver(daemon).wake("pages")
        await run.advanceToCancellation()
        let ended = await run.finish()
        #expect(ended.outcome == .expired && ended.partial && ended.retryAfter == nil)
        #expect(try ended.result(as: Int.self) != nil)
    }
}

/// A gate a handler waits at, deaf to cancellation, until the test opens it.
final class Gate: Sendable {
    private let waiting = Mutex<(open: Bool, continuations: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = waiting.withLock { w in
                if !w.open { w.continuations.append(continuation) }
                return w.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = waiting.withLock { w in
            w.open = true
            defer { w.continuations = [] }
            return w.continuations
        }
        waiters.forEach { $0.resume() }
    }
}
