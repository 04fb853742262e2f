import Synchronization
import Taskd
import TaskdTesting
import Testing

/// A handler's deadline under the kit's manual clock: its run's start plus its budget on that
/// clock, and `context.now` moves only as the test moves the clock, so a handler's "stop before
/// the deadline" is tested in the test's time, not in real time.
@Suite("TaskdTesting: a handler's deadline and now are on the manual clock")
struct TaskContextClockTests {
    /// What the handler read: its deadline, and `now` when it started and once the gate opened.
    struct Seen: Sendable {
        var deadline: ContinuousClock.Instant?
        var scheduledAt: ContinuousClock.Instant?
        var startedNow: ContinuousClock.Instant?
        var laterNow: ContinuousClock.Instant?
        var laterDeadline: ContinuousClock.Instant?
        var leftAtStart: Duration?
        var leftLater: Duration?
    }

    @Test("the deadline is the run's start plus its budget on the manual clock; now follows the test's advance")
    func deadlineOnTheManualClock() async throws {
        let gate = Gate()
        let seen = Mutex(Seen())
        let daemon = TaskDaemon().backgroundTask(
            .processing("batch"), budget: .seconds(60), cancelGrace: .seconds(5)
        ) { context in
            seen.withLock {
                $0.deadline = context.deadline
                $0.scheduledAt = context.scheduledAt
                $0.startedNow = context.now
                $0.leftAtStart = context.deadline - context.now
            }
            await gate.wait()
            seen.withLock {
                $0.laterNow = context.now
                $0.laterDeadline = context.deadline
                $0.leftLater = context.deadline - context.now
            }
        }
        let driver = TaskTestDriver(daemon)
        await driver.advance(by: .seconds(90))  // the run starts 90 s after the clock's origin
        let before = driver.now
        let run = try await driver.wake("batch")
        #expect(run.startedAt == before, "the run starts at once, at the clock's time")
        let read = seen.withLock { $0 }
        #expect(read.deadline == run.startedAt + .seconds(60))
        #expect(read.deadline == before + run.budget)
        #expect(read.startedNow == before && read.scheduledAt == before)
        #expect(read.leftAtStart == .seconds(60))

        await run.advance(by: .seconds(50))  // 50 s of the test's time, none of real time
        gate.open()
        let ended = await run.finish()
        #expect(ended.outcome == .completed)
        let later = seen.withLock { $0 }
        #expect(later.laterDeadline == read.deadline, "the deadline does not move")
        #expect(later.laterNow == before + .seconds(50))
        #expect(later.leftLater == .seconds(10), "the time left is the budget less the test's advance")
        #expect(driver.now == before + .seconds(50))
    }

    @Test("a handler that stops before its deadline does so in the test's time")
    func stopsBeforeTheDeadline() async throws {
        let step = Gate()
        let steps = Mutex(0)
        let chunks = BackgroundTask.processing("chunks", payload: [String: Int].self, result: Int.self)
        let daemon = TaskDaemon().backgroundTask(chunks, budget: .seconds(30), cancelGrace: .seconds(2)) { context in
            // The handler author's loop: a chunk takes 10 s; start one only while 10 s remain.
            var done = 0
            while context.deadline - context.now >= .seconds(10) {
                done += 1
                steps.withLock { $0 = done }
                await step.wait()
                if done >= 10 { break }  // a guard against a clock that never moves
            }
            return done
        }
        let driver = TaskTestDriver(daemon)
        let run = try await driver.wake("chunks")
        #expect(steps.withLock { $0 } == 1)
        await run.advance(by: .seconds(21))  // 9 s left: no chunk after this one
        step.open()
        let ended = await run.finish()
        #expect(ended.outcome == .completed)
        #expect(try ended.result(as: Int.self) == 1, "one chunk started: 9 s left is too little for the next")
    }

    @Test("a context made by hand reads the real continuous clock")
    func handMadeContextIsRealTime() {
        let context = TaskContext<Void>(task: "t", budget: .seconds(10))
        let left = context.deadline - context.now
        #expect(left <= .seconds(10) && left > .seconds(9))
        #expect(context.now <= ContinuousClock.now)
    }
}
