import Taskd
import TaskdTesting
import Testing
import WeatherKit

/// The weather app's handler, tested as an app's author would: through the public API and
/// `TaskdTesting`, the run decided by taskd's own scheduler on a manual clock.
@Suite("WeatherKit: the example's handler under TaskdTesting")
struct WeatherTests {
    let driver = TaskTestDriver(Weather.daemon())

    @Test("a wake with a payload completes and returns the forecast for that city")
    func completes() async throws {
        let run = try await driver.wake("WEATHER_DATA", payloadJSON: #"{"city": "Oslo", "steps": 1}"#, id: "oslo")
        let ended = await run.finish()
        #expect(ended.outcome == .completed)
        #expect(try ended.result(as: Forecast.self) == Forecast(city: "Oslo", steps: 1, attempt: 1))
        #expect(ended.journal.first?["MESSAGE"]?.contains("started (trigger wake") == true)
        #expect(ended.journal.last?["TASK_OUTCOME"] == "completed")
        #expect(ended.journal.last?["TASK_WAKE_ID"] == "oslo")
    }

    @Test("a retry's attempt number reaches the handler and its result")
    func attempt() async throws {
        let run = try await driver.start("WEATHER_DATA", trigger: .retry, attempt: 3, payloadJSON: #"{"steps": 1}"#)
        let ended = await run.finish()
        #expect(try ended.result(as: Forecast.self) == Forecast(city: "Paris", steps: 1, attempt: 3))
    }

    @Test("an empty city fails for good: PermanentFailure, no retry")
    func permanentFailure() async throws {
        let ended = try await driver.wake("WEATHER_DATA", payloadJSON: #"{"city": ""}"#).finish()
        #expect(ended.outcome == .failed)
        #expect(ended.error == "threw PermanentFailure: no city given")
        #expect(ended.retryAfter == nil)
    }

    @Test("a payload that does not decode fails the run, naming the member")
    func badPayload() async throws {
        let ended = try await driver.wake("WEATHER_DATA", payloadJSON: #"{"steps": "many"}"#).finish()
        #expect(ended.outcome == .failed)
        #expect(ended.error?.contains("steps") == true)
    }

    @Test("at budget − grace the handler is cancelled (its onCancel runs) and ends before the budget: expired")
    func cancelledAtTheBudget() async throws {
        let run = try await driver.wake("WEATHER_DATA", payloadJSON: #"{"steps": 100000}"#)
        await run.advanceToCancellation()
        #expect(await run.elapsed == .seconds(25))
        let ended = await run.finish()
        #expect(ended.outcome == .expired)
        #expect(ended.cancelReason == .budget)
        #expect(ended.journal.contains { $0["MESSAGE"]?.contains("cancellation signalled") == true })
    }

    @Test("a task the daemon does not register is refused with the ones it does")
    func unknownTask() async throws {
        await #expect(throws: TestDriverError.noSuchTask("NOPE", known: ["WEATHER_DATA"])) {
            _ = try await driver.wake("NOPE")
        }
    }
}
