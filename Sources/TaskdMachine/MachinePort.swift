import TaskScheduling

/// The machine the daemon runs on: which task conditions hold, system sleep and logind's inhibitor
/// locks. `MachineWatch` in taskd (power supplies, the system bus, statvfs, PSI); `ManualMachine`
/// (`TaskdTestSupport`) in tests. It tells of changes through the `MachineEvent` handler it was made with, on the event
/// loop. Used from the event loop only.
package protocol MachinePort: AnyObject, Sendable {
    /// Starts watching what `conditions` need (each source once).
    func watch(for conditions: Set<TaskCondition>)
    /// The conditions among `conditions` that do not hold now.
    func unheld(_ conditions: Set<TaskCondition>) -> Set<TaskCondition>
    /// What the machine is, in words, for the journal.
    var summary: String { get }
    /// Where conditions are learnt from, for the journal (empty: nothing to say).
    var sourceNote: String { get }
    /// Whether free space and pressure are read every few seconds now.
    var isSampling: Bool { get }
    /// Reads free space and pressure every few seconds while `on` (a run needs them).
    func sample(_ on: Bool)
    /// Takes (`hold`) or releases a logind inhibitor lock.
    func inhibit(_ lock: SleepInhibitor, hold: Bool)
    /// How long logind waits for a delay inhibitor before sleeping anyway (µs).
    var inhibitDelayMax: UInt64 { get }
}

/// What the machine tells the daemon: one event type from logind's and the power supplies'
/// signals to the daemon's one `switch`.
package enum MachineEvent: Sendable, Hashable {
    /// A condition may hold or not now.
    case conditions
    /// The system is about to sleep (logind's `PrepareForSleep(true)`).
    case prepareForSleep
    /// The system woke up (`PrepareForSleep(false)`).
    case resumed
}
