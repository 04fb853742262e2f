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
    /// A timer elapse missed while taskd was down or the system slept, caught up (`CatchUp=`).
    case catchup
    /// A run cut short by system sleep, an upgrade or a restart, started again after.
    case resume
    /// A fleet slot (`Fleet=once`) whose holder lost its claim before the slot was done, taken over.
    case takeover
}
