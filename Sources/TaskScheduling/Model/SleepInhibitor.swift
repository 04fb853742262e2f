/// A logind inhibitor lock taskd may hold.
public enum SleepInhibitor: String, Hashable, Sendable {
    /// Sleep waits (up to logind's `InhibitDelayMaxSec=`) until the runs it cancels have ended.
    case delay
    /// Sleep is refused while a run of a `Sleep=block` task is active.
    case block
}
