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
