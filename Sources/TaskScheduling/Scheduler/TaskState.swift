/// The scheduler's bookkeeping for one task: its definition, its next calendar elapse, and its
/// activity (runs, retry, start-up timers, last trigger) out of line, none while that is all at
/// its defaults (`TaskActivity`): an idle task's state stays small. The activity's fields read and
/// write as the state's own properties (`state.queue`).
@dynamicMemberLookup
public struct TaskState: Hashable, Sendable {
    public var definition: TaskDefinition
    /// The next `OnCalendar=` elapse: its CLOCK_REALTIME time, and the monotonic instant it maps to
    /// by the clock reading it was computed at (recomputed after each firing).
    public var calendarDueRealtime: UInt64?
    public var calendarDueMonotonic: UInt64?
    /// nil while the activity is all at its defaults.
    @usableFromInline var activityBox: TaskActivity.Box?

    /// The task's current run (the first of `inProgress`): running, or waiting for a slot.
    public var currentRunID: String? { self.inProgress.first }
    /// The task's other runs in progress, beside the current one (`Overlap=allow`), oldest first.
    public var instances: ArraySlice<String> { self.inProgress.dropFirst() }

    /// Whether the state keeps an activity box: false while its activity is at its defaults.
    var holdsActivity: Bool { activityBox != nil }

    /// The task's activity, whole; changing it changes the box in place when no copy of the state
    /// shares it, and drops the box once the activity is back at its defaults.
    @inlinable
    public var activity: TaskActivity {
        get { activityBox?.value ?? .idle }
        set { activityBox = newValue.isIdle ? nil : TaskActivity.Box(newValue) }
        _modify {
            if !isKnownUniquelyReferenced(&activityBox) {
                activityBox = TaskActivity.Box(activityBox?.value ?? .idle)
            }
            defer { if activityBox!.value.isIdleInPlace() { activityBox = nil } }
            yield &activityBox!.value
        }
    }

    /// Every `TaskActivity` field, read and written as a property of the state (`state.queue`):
    /// without a box it reads the idle defaults, allocating nothing; a write goes through `activity`.
    @inlinable
    public subscript<Value>(dynamicMember path: WritableKeyPath<TaskActivity, Value>) -> Value {
        // A getter inlined at every use, not `_read`: the key path then folds to the field; a call
        // left in place would walk it at run time on every read.
        @inline(__always) get { activityBox.map { $0.value[keyPath: path] } ?? TaskActivity.idle[keyPath: path] }
        _modify { yield &activity[keyPath: path] }
    }

    init(
        definition: TaskDefinition, daemonStart: ClockReading, persistedTrigger: UInt64? = nil,
        persistedRequest: UInt64? = nil
    ) {
        self.definition = definition
        if let persistedRequest { request(atRealtime: persistedRequest, now: daemonStart) }
        self.pendingStartup = definition.onStartup.map { daemonStart.monotonic &+ $0.microseconds }.sorted()
        if definition.persistent, let last = persistedTrigger, last < daemonStart.realtime {
            // Monotonic 0: a trigger of an earlier boot, which the interval timers do not count from.
            self.lastTrigger = ClockReading(monotonic: 0, realtime: last)
            catchUpCalendar(after: last, now: daemonStart)
            catchUpIntervals(after: last, now: daemonStart)
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
        state.catchUp = []
        state.randomDelay = 0
        state.calendarMemo = []
        state.rearmCalendar(after: now.realtime, now: now)
        return state
    }

    /// A run asked for at `realtime` (a past instant: at once), mapped to monotonic time by `now`.
    mutating func request(atRealtime realtime: UInt64, now: ClockReading) {
        self.requestedRealtime = realtime
        self.requestedMonotonic = realtime > now.realtime ? now.monotonic &+ (realtime - now.realtime) : now.monotonic
    }

    /// After a timer fired (`Scheduler.rearmFired`): its start-up elapses are spent, its calendar
    /// searches again after the elapse that fired, a requested run that came is spent, and
    /// `OnUnitActiveSec=` counts from now.
    mutating func rearm(fired: FiredTimer, at now: ClockReading) {
        self.pendingStartup.removeAll { $0 <= now.monotonic }
        if let requested = self.requestedMonotonic, requested <= now.monotonic {
            self.requestedRealtime = nil
            self.requestedMonotonic = nil
        }
        self.catchUp = []
        if let resume = self.resumeAt, resume <= now.monotonic { self.resumeAt = nil }
        if let after = fired.calendarAfter { rearmCalendar(after: after, now: now) }
        self.lastActivation = now.monotonic
    }

    /// Arms the calendar after `base` (the last trigger); elapses from then up to now were missed
    /// (downtime, sleep, a clock jump) and are caught up as `CatchUp=` says: the calendar stays due
    /// now with the elapses to run in `catchUp`, or, with none to run, is armed after now.
    mutating func catchUpCalendar(after base: UInt64, now: ClockReading) {
        rearmCalendar(after: base, now: now)
        guard let due = calendarDueRealtime, due <= now.realtime else { return }
        let missed = missedCalendarElapses(after: max(base, windowStart(now)), upTo: now.realtime)
        self.catchUp = missed
        if missed.isEmpty { rearmCalendar(after: now.realtime, now: now) }
    }

    /// With `Persistent=`, the interval timers count wall-clock time from the last trigger
    /// (`base`), across a restart or a sleep: the next elapse is carried over, and elapses missed
    /// are caught up as `CatchUp=` says.
    mutating func catchUpIntervals(after base: UInt64, now: ClockReading) {
        guard let span = (definition.onUnitActive + definition.onUnitInactive).min()?.microseconds, span > 0 else {
            return
        }
        self.lastActivation = nil
        self.lastDeactivation = nil
        self.lastTrigger = ClockReading(monotonic: 0, realtime: base)
        guard base &+ span <= now.realtime else {
            self.resumeAt = now.monotonic &+ (base &+ span - now.realtime)
            return
        }
        let latest = base &+ (now.realtime - base) / span * span
        var missed: [UInt64] = []
        var elapse = latest
        while elapse > base, elapse >= windowStart(now), missed.count < limit {
            missed.append(elapse)
            elapse &-= span
        }
        self.catchUp = missed.reversed()
        self.resumeAt = missed.isEmpty ? now.monotonic &+ (latest &+ span - now.realtime) : now.monotonic
    }

    /// How many missed elapses `CatchUp=` runs: one for `latest`, `CatchUpPolicy.limit` for `all`.
    private var limit: Int {
        switch definition.catchUp {
        case .none: return 0
        case .latest: return 1
        case .all: return CatchUpPolicy.limit
        }
    }

    /// The oldest missed elapse `CatchUpWindowSec=` lets run (0 without a window).
    private func windowStart(_ now: ClockReading) -> UInt64 {
        let window = definition.catchUpWindow.microseconds
        return window > 0 && now.realtime > window ? now.realtime - window : 0
    }

    /// The latest `limit` calendar elapses in (`lower`, `upper`], oldest first. It looks back
    /// over a span that grows fourfold until it holds enough of them, so a calendar that elapsed
    /// a million times while the machine was off costs a few searches, not a million.
    private func missedCalendarElapses(after lower: UInt64, upTo upper: UInt64) -> [UInt64] {
        guard limit > 0, lower < upper else { return [] }
        var back: UInt64 = 60_000_000
        while true {
            let from = upper - lower > back ? upper - back : lower
            var found: [UInt64] = []
            var elapse = nextCalendarElapse(after: from)
            while let e = elapse, e <= upper {
                found.append(e)
                if found.count > limit { found.removeFirst() }
                elapse = nextCalendarElapse(after: e)
            }
            if found.count >= limit || from == lower { return found }
            back = back > UInt64.max / 4 ? .max : back * 4
        }
    }

    /// The first elapse of any `OnCalendar=` entry strictly after `realtime` (no memo).
    private func nextCalendarElapse(after realtime: UInt64) -> UInt64? {
        definition.onCalendar.compactMap { $0.nextElapse(after: realtime) }.min()
    }

    /// Computes the next calendar elapse strictly after `realtime`, mapped to monotonic time by `now`.
    mutating func rearmCalendar(after realtime: UInt64, now: ClockReading) {
        if definition.onCalendar.count < 2 {
            setCalendarDue(definition.onCalendar.first?.nextElapse(after: realtime), now: now)
            return
        }
        if self.calendarMemo.count != definition.onCalendar.count {
            self.calendarMemo = Array(
                repeating: CalendarMemo(after: .max, next: nil), count: definition.onCalendar.count)
        }
        var next: UInt64?
        for (i, spec) in definition.onCalendar.enumerated() {
            let due: UInt64?
            if let memoized = self.calendarMemo[i].answer(after: realtime) {
                due = memoized
            } else {
                due = spec.nextElapse(after: realtime)
                self.calendarMemo[i] = CalendarMemo(after: realtime, next: due)
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
    public var nextElapse: UInt64? { nextTimer.map { $0 &+ self.randomDelay } }

    /// `nextElapse` on CLOCK_REALTIME: a calendar elapse is a wall-clock time already; others map
    /// from monotonic time by `now`.
    public func nextElapseRealtime(now: ClockReading) -> UInt64? {
        nextElapse.map { next in
            guard let calendar = calendarDueRealtime, next == calendarDueMonotonic.map({ $0 &+ self.randomDelay })
            else {
                return now.realtime(at: next)
            }
            return calendar &+ self.randomDelay
        }
    }

    /// `nextDue` of a state held in place: `optional?.dueInPlace()` reads it with no copy of the
    /// state, where `optional?.nextDue` copies all of it first.
    mutating func dueInPlace() -> UInt64? { nextDue }

    /// The task's key, read in place as `dueInPlace()` is (`optional!.definition.key` copies the state).
    mutating func keyInPlace() -> TaskKey { definition.key }

    /// The earliest instant this task needs the scheduler: a timer (random delay included) or its retry.
    var nextDue: UInt64? {
        switch (nextElapse, self.retry?.due) {
        case (let a?, let b?): return min(a, b)
        case (let a, let b): return a ?? b
        }
    }

    /// True when nothing of the task is left to happen: no run, queued run, retry, missed elapse
    /// or timer to come (a submitted task is removed then).
    public var isSpent: Bool {
        self.inProgress.isEmpty && self.queue.isEmpty && self.retry == nil
            && self.catchUp.isEmpty && nextDue == nil
    }

    /// The earliest timer, before the random delay.
    var nextTimer: UInt64? {
        var next = self.pendingStartup.first
        if let resume = self.resumeAt { next = min(next ?? resume, resume) }
        if let span = definition.onUnitInactive.min(), let trigger = self.lastTrigger?.monotonic,
            trigger != 0 || self.lastDeactivation != nil
        {
            let due = max(self.lastDeactivation ?? trigger, trigger) &+ span.microseconds
            next = min(next ?? due, due)
        }
        if let calendar = calendarDueMonotonic { next = min(next ?? calendar, calendar) }
        if let requested = self.requestedMonotonic { next = min(next ?? requested, requested) }
        if let base = self.lastActivation, let span = definition.onUnitActive.min() {
            let due = base &+ span.microseconds
            next = min(next ?? due, due)
        }
        return next
    }
}
