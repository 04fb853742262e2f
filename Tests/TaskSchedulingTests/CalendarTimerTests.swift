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

    /// Re-arming searches only the entry that fired (`CalendarMemo`); every other entry's remembered
    /// elapse must equal a fresh search, through 300 firings of five overlapping entries.
    @Test("many OnCalendar= lines: each re-arm equals a fresh search over every line")
    func memoMatchesFreshSearch() throws {
        let lines = ["*:00/7 UTC", "*:05 UTC", "*-*-* *:*:30 UTC", "Mon *-*-* 01:02:03 UTC", "*:00/13:15 UTC"]
        let specs = try lines.map { try CalendarSpec(parsing: $0) }
        var s = Scheduler(definitions: [try task(lines)], startedAt: start, random: SeededRandom(seed: 1))
        var realtime = start.realtime
        for _ in 0..<300 {
            let expected = specs.compactMap { $0.nextElapse(after: realtime) }.min()!
            let key = s.tasks.keys.first!
            #expect(s.tasks[key]?.calendarDueRealtime == expected)
            let now = start.advanced(by: expected - start.realtime)
            for case .start(let run) in s.advance(to: now) {
                _ = s.handlerEnded(runID: run.id, termination: .exited(0), at: now)
            }
            realtime = expected
        }
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

@Suite("Wall-clock jumps re-arm calendar timers from their last trigger (manual clock)")
struct ClockChangeTests {
    let start = ClockReading(monotonic: 7_000_000_000, realtime: 1_767_225_600_000_000)  // 2026-01-01 00:00 UTC
    let hour: UInt64 = 3_600_000_000

    func scheduler() throws -> Scheduler {
        let d = TaskDefinition(
            key: TaskKey(kind: "processing", identifier: "cal"), budget: .seconds(10),
            onCalendar: [try CalendarSpec(parsing: "*-*-* *:00:00 UTC")],
            handler: .command(CommandSpec(argv: ["/bin/true"])))
        return Scheduler(definitions: [d], startedAt: start, random: SeededRandom(seed: 3))
    }

    /// Runs what is due at `now` and ends it at once; returns how many runs started.
    func runDue(_ s: inout Scheduler, _ now: ClockReading) -> Int {
        var started = 0
        for case .start(let run) in s.advance(to: now) {
            started += 1
            _ = s.handlerEnded(runID: run.id, termination: .exited(0), at: now)
        }
        return started
    }

    @Test("a backward jump does not fire the same elapse twice")
    func backward() throws {
        var s = try scheduler()
        let at1 = start.advanced(by: hour)  // fires 01:00
        #expect(runDue(&s, at1) == 1)
        // The wall clock goes back 30 minutes (realtime 00:30) while monotonic time moves on 1 s.
        let jumped = ClockReading(monotonic: at1.monotonic + 1_000_000, realtime: at1.realtime - hour / 2)
        _ = s.clockChanged(at: jumped)
        let key = TaskKey(kind: "processing", identifier: "cal")
        #expect(s.tasks[key]?.calendarDueRealtime == start.realtime + 2 * hour)  // 02:00, not 01:00 again
        #expect(s.tasks[key]?.calendarDueMonotonic == jumped.monotonic + hour + hour / 2)
        #expect(runDue(&s, jumped.advanced(by: hour)) == 0)  // realtime 01:30: nothing
        #expect(runDue(&s, jumped.advanced(by: hour + hour / 2)) == 1)  // realtime 02:00
    }

    @Test("a forward jump over several elapses fires once, then keeps the schedule")
    func forward() throws {
        var s = try scheduler()
        #expect(runDue(&s, start.advanced(by: hour)) == 1)  // 01:00
        // Realtime leaps to 05:20 while monotonic time moves on 1 s: 02:00…05:00 were skipped.
        let jumped = ClockReading(
            monotonic: start.monotonic + hour + 1_000_000, realtime: start.realtime + 5 * hour + 20 * 60_000_000)
        _ = s.clockChanged(at: jumped)
        #expect(s.nextDeadline == jumped.monotonic)  // 02:00 is in the past: due now, once
        #expect(runDue(&s, jumped) == 1)
        let key = TaskKey(kind: "processing", identifier: "cal")
        #expect(s.tasks[key]?.calendarDueRealtime == start.realtime + 6 * hour)
        #expect(runDue(&s, jumped.advanced(by: 1_000_000)) == 0)
    }

    @Test("monotonic timers are not touched by a clock change")
    func monotonicUntouched() throws {
        let d = TaskDefinition(
            key: TaskKey(kind: "processing", identifier: "mono"), budget: .seconds(10), onStartup: [.seconds(600)],
            handler: .command(CommandSpec(argv: ["/bin/true"])))
        var s = Scheduler(definitions: [d], startedAt: start, random: SeededRandom(seed: 3))
        let before = s.nextDeadline
        #expect(
            s.clockChanged(at: ClockReading(monotonic: start.monotonic + 5, realtime: start.realtime + 99 * hour))
                .isEmpty)
        #expect(s.nextDeadline == before)
    }
}

@Suite("OnUnitInactiveSec=, RandomizedDelaySec=, FixedRandomDelay= (manual clock, seeded randomness)")
struct TimerKeyTests {
    let start = ClockReading(monotonic: 7_000_000_000, realtime: 1_767_225_600_000_000)
    let key = TaskKey(kind: "processing", identifier: "t")

    func definition(onStartup: [TimeSpan] = [], inactive: [TimeSpan] = [], delay: UInt64 = 0, fixed: Bool = false)
        -> TaskDefinition
    {
        var d = TaskDefinition(
            key: key, budget: .seconds(60), onStartup: onStartup, handler: .command(CommandSpec(argv: ["/bin/true"])))
        d.onUnitInactive = inactive
        d.randomizedDelay = .seconds(delay)
        d.fixedRandomDelay = fixed
        return d
    }

    @Test("OnUnitInactiveSec counts from the end of the last run, and needs a first trigger")
    func unitInactive() throws {
        var s = Scheduler(
            definitions: [definition(inactive: [.seconds(30)])], startedAt: start, random: SeededRandom(seed: 5))
        #expect(s.nextDeadline == nil)
        let run = try #require(try s.wake(target: "t", at: start).runs.first?.run)
        _ = s.handlerEnded(runID: run.id, termination: .exited(0), at: start.advanced(by: 12_000_000))
        #expect(s.nextDeadline == start.monotonic + 42_000_000)
        let fired = s.advance(to: start.advanced(by: 42_000_000))
        guard case .start(let second) = fired.first else { return #expect(Bool(false)) }
        #expect(second.trigger == .timer)
    }

    @Test("RandomizedDelaySec adds a delay below it, drawn again at each arming from the injected source")
    func randomized() throws {
        var s = Scheduler(
            definitions: [definition(onStartup: [.seconds(10)], inactive: [.seconds(100)], delay: 20)],
            startedAt: start,
            random: SeededRandom(seed: 9))
        let first = try #require(s.nextDeadline) - (start.monotonic + 10_000_000)
        #expect(first < 20_000_000)
        let fired = s.advance(to: start.advanced(by: 10_000_000 + first))
        guard case .start(let run) = fired.first else { return #expect(Bool(false), "\(fired.trace)") }
        let end = start.advanced(by: 11_000_000 + first)
        _ = s.handlerEnded(runID: run.id, termination: .exited(0), at: end)
        let second = try #require(s.nextDeadline) - (end.monotonic + 100_000_000)
        #expect(second < 20_000_000 && second != first)
        // The same seed gives the same delays.
        let again = Scheduler(
            definitions: [definition(onStartup: [.seconds(10)], delay: 20)], startedAt: start,
            random: SeededRandom(seed: 9))
        #expect(try #require(again.nextDeadline) - (start.monotonic + 10_000_000) == first)
    }

    @Test("FixedRandomDelay gives the same delay whatever the random source, per machine and task")
    func fixed() {
        func delay(seed: UInt64, machine: String) -> UInt64? {
            Scheduler(
                definitions: [definition(onStartup: [.seconds(10)], delay: 3600, fixed: true)], startedAt: start,
                random: SeededRandom(seed: seed), machineID: machine
            ).nextDeadline.map { $0 - start.monotonic - 10_000_000 }
        }
        let a = delay(seed: 1, machine: "m1")
        #expect(a != nil && a! < 3_600_000_000)
        #expect(delay(seed: 2, machine: "m1") == a)
        #expect(delay(seed: 1, machine: "m2") != a)
    }
}

@Suite("Persistent=: catch-up of elapses missed while the daemon was down (manual clock)")
struct PersistentTests {
    /// 2026-01-02 10:00:00 UTC.
    let start = ClockReading(monotonic: 9_000_000_000, realtime: 1_767_348_000_000_000)
    let hour: UInt64 = 3_600_000_000
    let key = TaskKey(kind: "processing", identifier: "p")

    func definition(persistent: Bool = true, delay: UInt64 = 0, name: String = "p") throws -> TaskDefinition {
        var d = TaskDefinition(
            key: TaskKey(kind: "processing", identifier: name), budget: .seconds(60),
            onCalendar: [try CalendarSpec(parsing: "*-*-* 06:00:00 UTC")],
            handler: .command(CommandSpec(argv: ["/bin/true"])))
        d.persistent = persistent
        d.randomizedDelay = .seconds(delay)
        return d
    }

    @Test("an elapse missed since the stored trigger fires once at start, as catchup, and is stored")
    func catchUp() throws {
        let yesterday6 = start.realtime - 28 * hour  // 2026-01-01 06:00
        var s = Scheduler(
            definitions: [try definition()], startedAt: start, random: SeededRandom(seed: 1),
            persistedTriggers: [key: yesterday6])
        #expect(s.nextDeadline == start.monotonic)
        let actions = s.advance(to: start)
        #expect(actions.trace == ["persist", "start", "started"])
        guard case .start(let run) = actions[1] else { return #expect(Bool(false)) }
        #expect(run.trigger == .catchup)
        #expect(run.scheduledRealtime == start.realtime - 4 * hour, "the time missed: today 06:00")
        #expect(actions.first == .persistTrigger(key, start.realtime))
        #expect(s.tasks[key]?.calendarDueRealtime == start.realtime + 20 * hour)  // 2026-01-03 06:00
        #expect(s.advance(to: start.advanced(by: 1_000_000)).isEmpty)  // once, not once per missed day
    }

    @Test("nothing missed since the stored trigger: the next elapse as usual")
    func nothingMissed() throws {
        let today6 = start.realtime - 4 * hour
        let s = Scheduler(
            definitions: [try definition()], startedAt: start, random: SeededRandom(seed: 1),
            persistedTriggers: [key: today6])
        #expect(s.nextDeadline == start.monotonic + 20 * hour)
    }

    @Test("without Persistent= a stored trigger is ignored")
    func notPersistent() throws {
        let s = Scheduler(
            definitions: [try definition(persistent: false)], startedAt: start, random: SeededRandom(seed: 1),
            persistedTriggers: [key: start.realtime - 48 * hour])
        #expect(s.nextDeadline == start.monotonic + 20 * hour)
    }

    @Test("catch-ups are spread over RandomizedDelaySec= instead of all firing at once")
    func spread() throws {
        let old = start.realtime - 72 * hour
        let names = ["a", "b", "c", "d"]
        let s = Scheduler(
            definitions: try names.map { try definition(delay: 600, name: $0) }, startedAt: start,
            random: SeededRandom(seed: 7),
            persistedTriggers: Dictionary(
                uniqueKeysWithValues: names.map { (TaskKey(kind: "processing", identifier: $0), old) }))
        let due = s.tasks.values.compactMap(\.nextElapse)
        #expect(due.count == 4)
        #expect(Set(due).count == 4)
        #expect(due.allSatisfy { $0 >= start.monotonic && $0 < start.monotonic + 600_000_000 })
    }
}
