/// What a task has done and has pending, apart from its definition and its calendar: its runs,
/// retry, start-up timers, random delay and last trigger. `TaskState` keeps it out of line, and
/// keeps none while all of it is at its defaults (a task that has never run, fired or armed a
/// start-up timer): 8 bytes per idle task instead of 104.
public struct TaskActivity: Hashable, Sendable {
    /// The task's runs in progress (running, or waiting for a slot), its current run first, then
    /// those started beside it (`Overlap=allow`, the only policy with more than one), oldest first.
    /// A cancelled run leaves it at once; as the current run leaves, the next becomes current.
    public var inProgress: [String] = []
    /// Runs waiting behind the current one (`Overlap=queue`), oldest first.
    public var queue: [String] = []
    /// A retry waiting for its backoff.
    public var retry: PendingRetry?
    /// The last run that ended as the task's own (never a fenced run): the task's last result.
    public var lastRun: Run?
    /// Monotonic instants of `OnStartupSec=` elapses that have not fired yet.
    public var pendingStartup: [UInt64] = []
    /// Monotonic instant of the last run's start and of the last timer trigger (OnUnitActiveSec= base).
    public var lastActivation: UInt64?
    /// Monotonic instant the last run ended (OnUnitInactiveSec= base).
    public var lastDeactivation: UInt64?
    /// The `RandomizedDelaySec=` delay added to the current arming, in microseconds.
    public var randomDelay: UInt64 = 0
    /// The task's last trigger (timer or wake), which `Persistent=` keeps; monotonic 0 for one of an earlier boot.
    public var lastTrigger: ClockReading?
    /// The run its handler asked for (`TaskContext.scheduleNext(after:)`): CLOCK_REALTIME µs, and
    /// the monotonic instant that maps to; cleared once it fires.
    public var requestedRealtime: UInt64?
    /// `requestedRealtime` mapped to CLOCK_MONOTONIC.
    public var requestedMonotonic: UInt64?
    /// Timer elapses missed during downtime or sleep (CLOCK_REALTIME µs, oldest first): the next
    /// firing makes one `catchup` run for each (`CatchUp=`).
    public var catchUp: [UInt64] = []
    /// An interval timer's elapse carried over a restart or a sleep (`Persistent=`), on CLOCK_MONOTONIC.
    public var resumeAt: UInt64?
    /// Per `OnCalendar=` entry, its last search (empty until the first, and for a single entry, whose
    /// search after a firing never falls in its last answer's range: no array for most tasks).
    var calendarMemo: [CalendarMemo] = []

    /// The activity of a task that has done nothing yet: every field at its default.
    @usableFromInline static let idle = TaskActivity()

    /// True while every field is at its default (`== .idle`, without copying the activity to
    /// compare it): checked after every change of a task's activity, on every trigger and end.
    /// A new field belongs here too (`TaskActivityTests` counts them). The fields a task that has
    /// ever run sets come first; `retry` and `lastRun` are read through a field of theirs, which
    /// compares no copy of the whole value.
    @usableFromInline var isIdle: Bool {
        inProgress.isEmpty && lastTrigger == nil && lastActivation == nil && lastDeactivation == nil
            && queue.isEmpty && pendingStartup.isEmpty && randomDelay == 0
            && requestedRealtime == nil && requestedMonotonic == nil && catchUp.isEmpty && resumeAt == nil
            && calendarMemo.isEmpty && retry?.due == nil && lastRun?.attempt == nil
    }

    /// `isIdle` of an activity held in place (a box's): no copy of it is made to ask.
    @usableFromInline mutating func isIdleInPlace() -> Bool { isIdle }

    /// The activity on the heap, shared by copies of a state until one of them changes it: only
    /// `TaskState` changes it, and only while it holds the only reference.
    @usableFromInline
    final class Box: Hashable, @unchecked Sendable {
        @usableFromInline var value: TaskActivity
        @usableFromInline init(_ value: TaskActivity) { self.value = value }

        @usableFromInline static func == (a: Box, b: Box) -> Bool { a === b || a.value == b.value }
        @usableFromInline func hash(into hasher: inout Hasher) { hasher.combine(value) }
    }
}
