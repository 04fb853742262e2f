import Synchronization
import Taskd
import TaskdDaemon
import TaskdTestSupport
import TaskdTesting
import Testing

/// Checkpoints in the test kit, on the real daemon: a run cut short resumes from the checkpoint it
/// kept; a completed run clears it; `.resumeFromStart` hands none on.
@Suite("Checkpoints: context.checkpoint, resumeState, and the kit's interruptions")
struct CheckpointTests {
    struct Progress: Codable, Equatable {
        var step: Int
        var total: Int
    }

    /// What the job did: the steps, in order; and the steps whose work crashes before its checkpoint.
    final class Log: Sendable {
        let done = Mutex<[Int]>([])
        let crashes = Mutex<Set<Int>>([])
    }

    /// A job of `steps` steps that keeps a checkpoint after each: the steps it did go to `log`, in
    /// order; it throws `Crash` before its checkpoint when the step is one of `log.crashes`.
    static func job(steps: Int, log: Log, requires: [TaskRequirement] = []) -> TaskDaemon {
        TaskDaemon().backgroundTask(
            .processing("job", payload: Int.self, result: Int.self), budget: .seconds(600), requires: requires,
            maxAttempts: 1000
        ) { context in
            var state = try context.resumeState(as: Progress.self) ?? Progress(step: 0, total: 0)
            while state.step < steps {
                log.done.withLock { $0.append(state.step) }
                state.total = (state.total &* 31 &+ state.step) % 1_000_003
                state.step += 1
                if log.crashes.withLock({ $0.remove(state.step - 1) != nil }) { throw Crash() }
                try await context.checkpoint(state)
                try Task.checkCancellation()
            }
            return state.total
        }
    }

    struct Crash: Error {}

    static func expected(steps: Int) -> Int { (0..<steps).reduce(0) { ($0 &* 31 &+ $1) % 1_000_003 } }

    @Test("a run cut short after its 4th checkpoint: the next run resumes from it; completing clears it")
    func resumes() async throws {
        let log = Log()
        let driver = TaskTestDriver(Self.job(steps: 10, log: log))
        driver.interrupt("job", afterCheckpoint: 4)
        let firstRun = try await driver.wake("job")
        let first = await firstRun.finish()
        #expect(first.outcome == RunOutcome.cancelled && first.cancelReason == CancelReason.requested)
        #expect(try await driver.checkpoint(of: "job") == #"{"step":4,"total":"# + "\(Self.partial(4))}")
        let second = try await driver.wake("job")
        let ended = await second.finish()
        #expect(ended.outcome == .completed)
        #expect(try ended.result(as: Int.self) == Self.expected(steps: 10))
        #expect(log.done.withLock { $0 } == Array(0..<10), "no step done twice, none skipped")
        #expect(try await driver.checkpoint(of: "job") == nil, "a completed run clears the checkpoint")
        #expect(
            second.journal.contains { $0["TASK_CHECKPOINT_RUN_ID"] == firstRun.runID }, "the resumption is journaled")
    }

    @Test(".resumeFromStart: the checkpoint is kept, never handed on")
    func fromStart() async throws {
        let log = Log()
        let driver = TaskTestDriver(Self.job(steps: 5, log: log, requires: [TaskRequirement.resumeFromStart]))
        driver.interrupt("job", afterCheckpoint: 3)
        _ = try await driver.wake("job").finish()
        #expect(try await driver.checkpoint(of: "job") != nil)
        #expect(try await driver.wake("job").finish().outcome == .completed)
        #expect(log.done.withLock { $0 } == [0, 1, 2] + Array(0..<5), "the second run started from step 0")
    }

    @Test("a checkpoint over 64 KiB is refused with CheckpointRefused, and the last one kept stays")
    func tooLarge() async throws {
        let caught = Mutex<String?>(nil)
        let daemon = TaskDaemon().backgroundTask(.processing("big")) { context in
            try await context.checkpoint("small")
            do {
                try await context.checkpoint(String(repeating: "x", count: 70_000))
            } catch let refused as CheckpointRefused {
                caught.withLock { $0 = refused.description }
            }
            throw Crash()
        }
        let driver = TaskTestDriver(daemon)
        #expect(try await driver.wake("big").finish().outcome == .failed)
        #expect(caught.withLock { $0 }?.contains("at most 65536") == true)
        #expect(try await driver.checkpoint(of: "big") == #""small""#)
    }

    /// The issue's demonstration, in process: 10,000 steps, 100 interruptions of every kind the kit
    /// has (cancel, sleep, budget, and the handler's own crash before its checkpoint, retried).
    @Test("a 10,000-step job interrupted 100 times ends with the same result, at most one step redone each time")
    func interruptedHundredTimes() async throws {
        let steps = 10_000
        let log = Log()
        let driver = TaskTestDriver(Self.job(steps: steps, log: log))
        var random = SeededRandom(seed: 47)
        var kinds: [String: Int] = [:]
        var previous: TestRunResult?
        var previousID = ""
        var previousRun: TestRun?
        var crashed = 0
        // Each interruption is armed before the run it cuts starts (a handler runs at once); at most
        // 99 checkpoints apart, so that the 100 of them come before the job's end.
        for i in 0...100 {
            if i < 100 {
                let after = Int.random(in: 1...99, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: driver.interrupt("job", afterCheckpoint: after, by: .cancel)
                case 1: driver.interrupt("job", afterCheckpoint: after, by: .sleep)
                case 2: driver.interrupt("job", afterCheckpoint: after, by: .budget)
                default:
                    // The handler crashes in a step's work, before its checkpoint: that step is redone.
                    let next = try await driver.checkpoint(of: "job").map { try Self.step(of: $0) } ?? 0
                    log.crashes.withLock { $0 = [next + after - 1] }
                    crashed += 1
                }
            }
            let run: TestRun
            switch (previous?.outcome, previous?.cancelReason) {
            case (nil, _), (.cancelled?, .requested?):
                run = try await driver.wake("job")
            case (.cancelled?, .sleep?):
                await driver.systemResumes()
                run = await driver.nextRun(of: "job", after: previousRun)
            default:
                // Failed or killed: retried after its backoff (and once an abandoned handler
                // returned), from the checkpoint.
                await driver.advance(by: previous?.retryAfter ?? .seconds(1))
                run = await driver.nextRun(of: "job", after: previousRun)
            }
            previousRun = run
            try #require(run.runID != previousID, "iteration \(i): no new run after \(String(describing: previous))")
            previousID = run.runID
            let ended = await run.finish()
            kinds[ended.cancelReason?.rawValue ?? ended.outcome.rawValue, default: 0] += 1
            previous = ended
        }
        let last = try #require(previous)
        #expect(last.outcome == .completed, "\(kinds)")
        #expect(try last.result(as: Int.self) == Self.expected(steps: steps))
        let did = log.done.withLock { $0 }
        #expect(Set(did) == Set(0..<steps), "every step was done")
        let redone = did.count - steps
        // A checkpoint then an interruption redoes nothing; a crash before its step's checkpoint
        // redoes that step: at most one step per interruption.
        #expect(redone == crashed, "\(redone) steps redone, \(crashed) crashes; by kind \(kinds)")
        #expect(driver.runs(of: "job").count == 101)
        #expect(kinds.count == 5, "every kind of interruption happened, and the end: \(kinds)")
    }

    static func step(of json: String) throws -> Int {
        try #require(json.split(separator: ",").first?.split(separator: ":").last.flatMap { Int($0) })
    }

    static func partial(_ steps: Int) -> Int { (0..<steps).reduce(0) { ($0 &* 31 &+ $1) % 1_000_003 } }
}
