import TaskScheduling

/// When a task runs without a wake: the timers a task file's `[Timer]` section sets, given in code.
///
/// ```swift
/// .backgroundTask(.processing("REPORT"), schedule: [.calendar("Mon..Fri 09:00"), .randomizedDelay(.seconds(300)), .persistent]) { … }
/// ```
public struct TaskSchedule: Sendable {
    /// Writes this part of the schedule into a definition; a calendar that does not parse throws.
    let apply: @Sendable (inout TaskDefinition) throws(CalendarError) -> Void

    /// `OnCalendar=`: at the wall-clock times a systemd calendar expression names
    /// (`"daily"`, `"Mon..Fri 09:00"`, `"*:0/15"`; see `taskctl calendar`). A registration whose
    /// expression does not parse stops the daemon at start with an error naming the task.
    public static func calendar(_ expression: String) -> TaskSchedule {
        TaskSchedule { (definition: inout TaskDefinition) throws(CalendarError) in
            definition.onCalendar.append(try CalendarSpec(parsing: expression))
        }
    }

    /// `OnUnitActiveSec=`: `interval` after each run's start. Alone (no `.afterStartup`), the first
    /// run comes one interval after the daemon starts, as with `every:`.
    public static func every(_ interval: Duration) -> TaskSchedule {
        TaskSchedule { definition in definition.onUnitActive.append(TimeSpan(interval)) }
    }

    /// `OnStartupSec=`: once, `delay` after the daemon starts (`.zero`: at once).
    public static func afterStartup(_ delay: Duration) -> TaskSchedule {
        TaskSchedule { definition in definition.onStartup.append(TimeSpan(delay)) }
    }

    /// `OnUnitInactiveSec=`: `interval` after each run's end.
    public static func afterRunEnds(_ interval: Duration) -> TaskSchedule {
        TaskSchedule { definition in definition.onUnitInactive.append(TimeSpan(interval)) }
    }

    /// `RandomizedDelaySec=` (and `FixedRandomDelay=` with `fixed`): each arming of the timers adds
    /// a delay drawn from [0, `maximum`); with `fixed`, the same delay each time for this machine.
    public static func randomizedDelay(_ maximum: Duration, fixed: Bool = false) -> TaskSchedule {
        TaskSchedule { definition in
            definition.randomizedDelay = TimeSpan(maximum)
            definition.fixedRandomDelay = fixed
        }
    }

    /// `Persistent=yes`: the last trigger is kept across restarts; a time missed while the daemon
    /// was down runs at start (trigger `catchup`, as `catchUp` says), and `every`/`afterRunEnds`
    /// count wall-clock time across restarts and sleep.
    public static var persistent: TaskSchedule {
        TaskSchedule { definition in definition.persistent = true }
    }

    /// `CatchUp=` and `CatchUpWindowSec=`: what timer elapses missed during downtime
    /// (`.persistent`) or sleep make: `.none`, one run for the `.latest` (the default), or `.all`
    /// of them; with `within`, only those missed at most that long ago.
    public static func catchUp(_ policy: CatchUpPolicy, within window: Duration? = nil) -> TaskSchedule {
        TaskSchedule { definition in
            definition.catchUp = policy
            definition.catchUpWindow = window.map(TimeSpan.init) ?? .zero
        }
    }
}

extension TimeSpan {
    /// A Swift `Duration` as a time span, whole microseconds, negative as zero.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(
            microseconds: UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000)
    }
}
