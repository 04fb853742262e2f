import Testing

@testable import TaskScheduling

/// The daemon starts handlers between `fire(at:)` and `rearmFired(at:)`; `advance(to:)` is the two
/// in one. These walk two schedulers with the same seed, one each way, through every kind of timer.
@Suite("fire(at:) then rearmFired(at:) is advance(to:) in two steps (manual clock)")
struct FireAndRearmTests {
    let start = ClockReading(monotonic: 7_000_000_000, realtime: 1_767_225_600_000_000)

    func definitions() throws -> [TaskDefinition] {
        var calendar = commandTask("cal", kind: "processing")
        calendar.onCalendar = [try CalendarSpec(parsing: "*:0/15 UTC"), try CalendarSpec(parsing: "*:07 UTC")]
        calendar.randomizedDelay = .seconds(90)
        var boot = commandTask("boot", kind: "processing", onStartup: [10])
        boot.onCalendar = [try CalendarSpec(parsing: "*-*-* 00:00:10 UTC")]
        var flaky = commandTask("flaky", onStartup: [5], onUnitActive: [600])
        flaky.retry.maxAttempts = 3
        return [calendar, boot, flaky]
    }

    @Test("the same actions, tasks, runs and next deadline at every step, retries included")
    func sameAsAdvance() throws {
        var oneStep = Scheduler(definitions: try definitions(), startedAt: start, random: SeededRandom(seed: 7))
        var twoSteps = Scheduler(definitions: try definitions(), startedAt: start, random: SeededRandom(seed: 7))
        var fired = 0
        var retries = 0
        for _ in 0..<60 {
            let next = try #require(oneStep.nextDeadline)
            let now = start.advanced(by: next - start.monotonic)
            let expected = oneStep.advance(to: now)
            let actions = twoSteps.fire(at: now)
            twoSteps.rearmFired(at: now)
            #expect(actions == expected)
            #expect(twoSteps.tasks == oneStep.tasks)
            #expect(twoSteps.runs == oneStep.runs)
            #expect(twoSteps.nextDeadline == oneStep.nextDeadline)
            for case .start(let run) in expected {
                fired += 1
                if run.trigger == .retry { retries += 1 }
                // Every other run of `flaky` fails, so retries come due among the timers.
                let status: Int32 = run.key.identifier == "flaky" && fired % 2 == 0 ? 1 : 0
                let end = now.advanced(by: 1_000_000)
                #expect(
                    twoSteps.handlerEnded(runID: run.id, termination: .exited(status), at: end)
                        == oneStep.handlerEnded(runID: run.id, termination: .exited(status), at: end))
            }
        }
        #expect(fired >= 50)
        #expect(retries > 0)
    }

    @Test("a fire whose re-arming was left out is re-armed by the next fire, not fired twice")
    func secondFireRearmsFirst() throws {
        var s = Scheduler(definitions: try definitions(), startedAt: start, random: SeededRandom(seed: 7))
        let now = start.advanced(by: 5_000_000)
        #expect(s.fire(at: now).trace == ["start", "started"])  // flaky's OnStartupSec=5
        #expect(s.fire(at: now).isEmpty)
        #expect((s.nextDeadline ?? 0) > now.monotonic)
    }
}
