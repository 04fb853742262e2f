/// The scheduler's bookkeeping for one task: its definition, current run, timers and last result.
/// The retry and the last run are kept out of line: most tasks have neither, and inline they were
/// 320 of a state's 816 bytes. Optional instants are packed (`PackedInstant`): 8 bytes, not 16.
public struct TaskState: Hashable, Sendable {
    public var definition: TaskDefinition
    /// The task's run: running, or waiting for a slot. A cancelled run is detached from it at once.
    public var currentRunID: String?
    /// Runs waiting behind the current one (`Overlap=queue`), oldest first.
    public var queue: [String] = []
    /// A retry waiting for its backoff.
    @OutOfLine public var retry: PendingRetry?
    /// The last run that ended as the task's own (never a fenced run): the task's last result.
    @OutOfLine public var lastRun: Run?
    /// Monotonic instants of `OnStartupSec=` elapses that have not fired yet.
    public var pendingStartup: [UInt64]
    /// Monotonic instant of the last run's start and of the last timer trigger (OnUnitActiveSec= base).
    @PackedInstant public var lastActivation: UInt64? = nil
    /// Monotonic instant the last run ended (OnUnitInactiveSec= base).
    @PackedInstant public var lastDeactivation: UInt64? = nil
    /// The `RandomizedDelaySec=` delay added to the current arming, in microseconds.
    public var randomDelay: UInt64 = 0
    public var lastTrigger: ClockReading?
    /// True while the pending calendar elapse is one missed during downtime (`Persistent=`);
    /// declared after `lastTrigger`, it sits in that optional's padding.
    public var catchUpPending = false
    /// The next `OnCalendar=` elapse: its CLOCK_REALTIME time, and the monotonic instant it maps to
    /// by the clock reading it was computed at (recomputed after each firing).
    @PackedInstant public var calendarDueRealtime: UInt64? = nil
    @PackedInstant public var calendarDueMonotonic: UInt64? = nil
    /// Per `OnCalendar=` entry, its last search (empty until the first, and for a single entry, whose
    /// search after a firing never falls in its last answer's range: no array for most tasks).
    var calendarMemo: [CalendarMemo] = []

    init(definition: TaskDefinition, daemonStart: ClockReading, persistedTrigger: UInt64? = nil) {
        self.definition = definition
        self.pendingStartup = definition.onStartup.map { daemonStart.monotonic &+ $0.microseconds }.sorted()
        if definition.persistent, let last = persistedTrigger, last < daemonStart.realtime {
            lastTrigger = ClockReading(monotonic: 0, realtime: last)
            rearmCalendar(after: last, now: daemonStart)
            catchUpPending = (calendarDueRealtime ?? .max) <= daemonStart.realtime
        } else {
            rearmCalendar(after: daemonStart.realtime, now: daemonStart)
        }
    }

    /// This task under a new definition (reload): its runs, queue, retry and last trigger are kept;
    /// its timers are armed again from now, and start-up timers already past do not fire again.
    func reconfigured(_ new: TaskDefinition, daemonStart: ClockReading, now: ClockReading) -> TaskState {
        var state = self
        state.definition = new
        state.pendingStartup = new.onStartup.map { daemonStart.monotonic &+ $0.microseconds }.sorted()
            .filter { $0 >= now.monotonic }
        state.catchUpPending = false
        state.randomDelay = 0
        state.calendarMemo = []
        state.rearmCalendar(after: now.realtime, now: now)
        return state
    }

    /// After a timer fired (`Scheduler.rearmFired`): its start-up elapses are spent, its calendar
    /// searches again after the elapse that fired, and `OnUnitActiveSec=` counts from now.
    mutating func rearm(fired: FiredTimer, at now: ClockReading) {
        pendingStartup.removeAll { $0 <= now.monotonic }
        catchUpPending = false
        if let after = fired.calendarAfter { rearmCalendar(after: after, now: now) }
        lastActivation = now.monotonic
    }

    /// Computes the next calendar elapse strictly after `realtime`, mapped to monotonic time by `now`.
    mutating func rearmCalendar(after realtime: UInt64, now: ClockReading) {
        if definition.onCalendar.count < 2 {
            setCalendarDue(definition.onCalendar.first?.nextElapse(after: realtime), now: now)
            return
        }
        if calendarMemo.count != definition.onCalendar.count {
            calendarMemo = Array(repeating: CalendarMemo(after: .max, next: nil), count: definition.onCalendar.count)
        }
        var next: UInt64?
        for (i, spec) in definition.onCalendar.enumerated() {
            let due: UInt64?
            if let memoized = calendarMemo[i].answer(after: realtime) {
                due = memoized
            } else {
                due = spec.nextElapse(after: realtime)
                calendarMemo[i] = CalendarMemo(after: realtime, next: due)
            }
            if let due { next = min(next ?? due, due) }
        }
        setCalendarDue(next, now: now)
    }

    private mutating func setCalendarDue(_ next: UInt64?, now: ClockReading) {
        calendarDueRealtime = next
        calendarDueMonotonic = next.map { due in
            due > now.realtime ? now.monotonic &+ (due - now.realtime) : now.monotonic
        }
    }

    /// The next monotonic instant a timer of this task elapses (its random delay included), or nil.
    public var nextElapse: UInt64? { nextTimer.map { $0 &+ randomDelay } }

    /// `nextDue` of a state held in place: `optional?.dueInPlace()` reads it with no copy of the
    /// state, where `optional?.nextDue` copies all of it first.
    mutating func dueInPlace() -> UInt64? { nextDue }

    /// The task's key, read in place as `dueInPlace()` is (`optional!.definition.key` copies the state).
    mutating func keyInPlace() -> TaskKey { definition.key }

    /// The earliest instant this task needs the scheduler: a timer (random delay included) or its retry.
    var nextDue: UInt64? {
        switch (nextElapse, retry?.due) {
        case (let a?, let b?): return min(a, b)
        case (let a, let b): return a ?? b
        }
    }

    /// The earliest timer, before the random delay.
    var nextTimer: UInt64? {
        var next = pendingStartup.first
        if let span = definition.onUnitInactive.min(), let trigger = lastTrigger?.monotonic {
            let due = max(lastDeactivation ?? trigger, trigger) &+ span.microseconds
            next = min(next ?? due, due)
        }
        if let calendar = calendarDueMonotonic { next = min(next ?? calendar, calendar) }
        if let base = lastActivation, let span = definition.onUnitActive.min() {
            let due = base &+ span.microseconds
            next = min(next ?? due, due)
        }
        return next
    }
}
