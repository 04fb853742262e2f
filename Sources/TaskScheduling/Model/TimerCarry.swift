/// A task's timers as an upgrade in place hands them to the next image: the start-up timers that
/// have not fired yet and the instants the interval timers count from (CLOCK_MONOTONIC goes on
/// across `execve`), so that an upgrade neither fires `OnStartupSec=` again nor moves the next
/// `OnUnitActiveSec=`/`OnUnitInactiveSec=` elapse.
public struct TimerCarry: Hashable, Sendable, Codable {
    public var kind: String
    public var identifier: String
    public var pendingStartup: [UInt64]
    /// `[monotonic, realtime]` of the last trigger.
    public var lastTrigger: [UInt64]?
    public var lastActivation: UInt64?
    public var lastDeactivation: UInt64?
    public var randomDelay: UInt64
    /// The next `OnCalendar=` elapse it had armed (CLOCK_REALTIME): one that falls during the
    /// upgrade still fires.
    public var calendarDue: UInt64?

    public var key: TaskKey { TaskKey(kind: kind, identifier: identifier) }
}
