import Testing

@testable import TaskScheduling

@Suite("OnCalendar= timers in the scheduler (manual clock)")
struct CalendarTimerTests {
    /// 2026-01-01 00:00:00 UTC on the realtime clock.
    let start = ClockReading(monotonic: 7_000_000_000, realtime: 1_767_225_600_000_000)
    let hour: UInt64 = 3_600_000_000

    func task(_ calendar: [String], onStartup: [TimeSpan] = [], budget: UInt64 = 30) throws -> TaskDefinition {
        TaskDefinition(
            key: TaskKey(kind: "processing", identifier: "cal"), budget: .seconds(budget), onStartup: onStartup,
            onCalendar: try calendar.map { try CalendarSpec(parsing: $0) },
            handler: .command(CommandSpec(argv: ["/bin/true"])))
    }

    @Test("the first elapse maps to its monotonic instant; after firing it re-arms for the next one")
    func daily() throws {
        var s = Scheduler(
            definitions: [try task(["*-*-* 06:00:00 UTC"])], startedAt: start, random: SeededRandom(seed: 1))
        #expect(s.nextDeadline == start.monotonic + 6 * hour)
        #expect(s.advance(to: start.advanced(by: 6 * hour - 1)).isEmpty)
        let fired = s.advance(to: start.advanced(by: 6 * hour))
        guard case .start(let run) = fired.first else { return #expect(Bool(false), "\(fired.trace)") }
        #expect(run.trigger == .timer)
        let key = run.key
        #expect(s.tasks[key]?.calendarDueRealtime == start.realtime + 30 * hour)
        _ = s.handlerEnded(runID: run.id, termination: .exited(0), at: start.advanced(by: 6 * hour + 1_000_000))
        #expect(s.nextDeadline == start.monotonic + 30 * hour)
    }

    @Test("the earliest of several OnCalendar= lines counts")
    func earliest() throws {
        let s = Scheduler(
            definitions: [try task(["*-*-* 12:00 UTC", "*-*-* 03:30 UTC"])], startedAt: start,
            random: SeededRandom(seed: 1))
        #expect(s.nextDeadline == start.monotonic + 3 * hour + hour / 2)
    }

    @Test("a calendar elapse during a run coalesces into it and re-arms")
    func coalesces() throws {
        var s = Scheduler(
            definitions: [try task(["hourly"], budget: 7200)], startedAt: start, random: SeededRandom(seed: 1))
        let first = s.advance(to: start.advanced(by: hour))
        #expect(first.trace == ["start", "started"])
        let second = s.advance(to: start.advanced(by: 2 * hour))
        #expect(second.trace == ["coalesced"])
        #expect(s.tasks.values.first?.calendarDueMonotonic == start.monotonic + 3 * hour)
    }

    @Test("a startup and a calendar elapse due together make one run, triggered as startup")
    func oneTrigger() throws {
        var s = Scheduler(
            definitions: [try task(["*-*-* 00:00:10 UTC"], onStartup: [.seconds(10)])], startedAt: start,
            random: SeededRandom(seed: 1))
        let actions = s.advance(to: start.advanced(by: 10_000_000))
        #expect(actions.trace == ["start", "started"])
        guard case .start(let run) = actions.first else { return #expect(Bool(false)) }
        #expect(run.trigger == .startup)
        #expect(s.tasks[run.key]?.calendarDueRealtime == start.realtime + 24 * hour + 10_000_000)
    }

    @Test("an expression that never elapses arms nothing")
    func never() throws {
        let s = Scheduler(definitions: [try task(["*-02-30"])], startedAt: start, random: SeededRandom(seed: 1))
        #expect(s.nextDeadline == nil)
    }
}
