/// What started a run; handlers see it as `TASKD_TRIGGER`.
public enum Trigger: String, Hashable, Sendable, CaseIterable {
    /// `OnStartupSec=` elapsed.
    case startup
    /// `OnUnitActiveSec=` elapsed.
    case timer
    /// `taskctl wake` or a Varlink `Wake` call.
    case wake
    /// A retry after a failed attempt.
    case retry
    /// A missed calendar elapse caught up after downtime.
    case catchup
}
