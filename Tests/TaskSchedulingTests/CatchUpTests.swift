import Testing

@testable import TaskScheduling

/// CatchUp=, CatchUpWindowSec= and Persistent= interval timers on a manual clock: what elapses
/// missed during downtime make at start, for each policy.
@Suite("Scheduler: catching up timer elapses missed while taskd was down")
struct CatchUpTests {
    /// 2026-01-02 10:30:00 UTC.
    let start = ClockReading(monotonic: 9_000_000_000, realtime: 1_767_349_800_000_000)
    let hour: UInt64 = 3_600_000_000
    let key = TaskKey(kind: "processing", identifier: "p")

    /// Hourly at minute 0, queued so that every catch-up run is kept, with `policy` and `window` hours.
    func hourly(_ policy: CatchUpPolicy, window: UInt64 = 0, calendar: String = "*-*-* *:00:00 UTC") throws
        -> TaskDefinition
    {
        var d = TaskDefinition(
            key: key, budget: .seconds(60), onCalendar: [try CalendarSpec(parsing: calendar)],
            handler: .command(CommandSpec(argv: ["/bin/true"])))
        d.persistent = true
        d.catchUp = policy
        d.catchUpWindow = .seconds(window * 3600)
        d.overlap = .queue
        d.queueLimit = 1000
        return d
    }

    func scheduler(_ d: TaskDefinition, lastTrigger: UInt64) -> Scheduler {
        Scheduler(
            definitions: [d], startedAt: start, random: SeededRandom(seed: 1), persistedTriggers: [key: lastTrigger])
    }

    /// The scheduled times of the `catchup` runs among `actions`, in hours before the start.
    func catchUpHoursAgo(_ s: Scheduler) -> [Double] {
        s.runs.values.filter { $0.trigger == .catchup }.map(\.scheduledRealtime).sorted().map {
            Double(start.realtime - $0) / Double(hour)
        }
    }

    @Test("latest (the default): one run, at the latest hour missed; the next hour armed after now")
    func latest() throws {
        var s = scheduler(try hourly(.latest), lastTrigger: start.realtime - 10 * hour)
        #expect(s.nextDeadline == start.monotonic)
        #expect(s.advance(to: start).trace == ["persist", "start", "started"])
        #expect(catchUpHoursAgo(s) == [0.5], "10:00, the latest of the nine missed")
        #expect(s.tasks[key]?.calendarDueRealtime == start.realtime + hour / 2)
    }

    @Test("all: one run per missed elapse, oldest first, each with its own scheduled time")
    func all() throws {
        var s = scheduler(try hourly(.all), lastTrigger: start.realtime - 10 * hour - hour / 2)
        _ = s.advance(to: start)
        #expect(catchUpHoursAgo(s) == [9.5, 8.5, 7.5, 6.5, 5.5, 4.5, 3.5, 2.5, 1.5, 0.5])
        let first = try #require(s.runs.values.first { $0.state == .running })
        #expect(first.scheduledRealtime == start.realtime - 19 * hour / 2, "the oldest starts first")
    }

    @Test("CatchUpWindowSec=: only the elapses missed within the window run")
    func window() throws {
        var s = scheduler(try hourly(.all, window: 3), lastTrigger: start.realtime - 10 * hour)
        _ = s.advance(to: start)
        #expect(catchUpHoursAgo(s) == [2.5, 1.5, 0.5])
        // Nothing missed within a window shorter than the gap: no run, the next elapse armed.
        var late = scheduler(
            try hourly(.latest, window: 1, calendar: "*-*-* 06:00:00 UTC"), lastTrigger: start.realtime - 30 * hour)
        #expect(late.advance(to: start).isEmpty)
        #expect(late.tasks[key]?.calendarDueRealtime == start.realtime + 19 * hour + hour / 2)
    }

    @Test("none: nothing runs at start; the next elapse after now is armed")
    func none() throws {
        var s = scheduler(try hourly(.none), lastTrigger: start.realtime - 10 * hour)
        #expect(s.nextDeadline == start.monotonic + hour / 2)
        #expect(s.advance(to: start).isEmpty)
    }

    @Test("all, a minutely calendar missed for a year: the latest 100 elapses, found without a year of searching")
    func allIsBounded() throws {
        var s = scheduler(
            try hourly(.all, calendar: "*-*-* *:*:00 UTC"), lastTrigger: start.realtime - 365 * 24 * hour)
        _ = s.advance(to: start)
        let ago = catchUpHoursAgo(s)
        #expect(ago.count == CatchUpPolicy.limit)
        #expect(ago.first == 99.0 / 60 && ago.last == 0, "10:30 itself is an elapse, and not after now")
    }

    @Test("Persistent= OnUnitActiveSec=: the interval counts wall-clock time across the downtime")
    func interval() throws {
        func every(_ policy: CatchUpPolicy) -> TaskDefinition {
            var d = commandTask("p", kind: "processing", onUnitActive: [3600])
            d.persistent = true
            d.catchUp = policy
            d.overlap = .queue
            return d
        }
        // Triggered 20 minutes before the start: the next run 40 minutes after it, as a timer.
        var soon = scheduler(every(.latest), lastTrigger: start.realtime - hour / 3)
        #expect(soon.nextDeadline == start.monotonic + 2 * hour / 3)
        #expect(soon.advance(to: start.advanced(by: 2 * hour / 3)).trace == ["persist", "start", "started"])
        #expect(soon.runs.values.first?.trigger == .timer)
        #expect(soon.tasks[key]?.nextElapse == start.monotonic + 2 * hour / 3 + hour, "then every hour from that run")

        // Triggered 3.5 hours before: three elapses missed.
        let last = start.realtime - 7 * hour / 2
        var latest = scheduler(every(.latest), lastTrigger: last)
        _ = latest.advance(to: start)
        #expect(catchUpHoursAgo(latest) == [0.5])
        var all = scheduler(every(.all), lastTrigger: last)
        _ = all.advance(to: start)
        #expect(catchUpHoursAgo(all) == [2.5, 1.5, 0.5])
        let none = scheduler(every(.none), lastTrigger: last)
        #expect(none.nextDeadline == start.monotonic + hour / 2, "the next elapse on the same grid")
    }

    @Test("without Persistent= an interval timer counts from the start, as before")
    func intervalNotPersistent() {
        let d = commandTask("p", kind: "processing", onUnitActive: [3600])
        let s = scheduler(d, lastTrigger: start.realtime - 7 * hour / 2)
        #expect(s.nextDeadline == nil || s.nextDeadline! >= start.monotonic + hour / 2)
        #expect(s.tasks[key]?.catchUp.isEmpty == true)
    }
}
