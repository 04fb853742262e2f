/// `Sleep=`: what a run in progress does when the system is about to sleep.
public enum SleepPolicy: String, Hashable, Sendable {
    /// Cancelled as at its budget, its grace bounded by logind's `InhibitDelayMaxSec=`; outcome
    /// `cancelled`, reason `sleep`; it runs again after the system resumes.
    case cancel
    /// taskd holds a sleep *block* inhibitor while the run lasts: work that must not be cut.
    case block
}
