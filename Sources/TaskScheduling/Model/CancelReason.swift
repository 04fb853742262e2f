/// Why a run was cancelled; journaled as `TASK_CANCEL_REASON`.
public enum CancelReason: String, Hashable, Sendable, CaseIterable {
    /// The runtime budget's cancellation point came (the run then ends `expired` or `killed`).
    case budget
    /// `taskctl cancel` / Varlink `Cancel`.
    case requested
    /// A wake with another id replaced the run (`task(id:)`).
    case superseded
    /// The task's definition changed on reload.
    case reconfigured
    /// The task was removed on reload.
    case removed
    /// The daemon is stopping.
    case shutdown
    /// The run reported no progress for `ProgressTimeoutSec=`.
    case noProgress = "no-progress"
    /// The run waited `MaxDeferSec=` for its task's conditions, which did not come to hold.
    case conditionTimeout = "condition-timeout"
    /// A condition of its task stopped holding while it ran (`ConditionLost=cancel`).
    case conditionLost = "condition-lost"
    /// The system is about to sleep (logind's `PrepareForSleep`; `Sleep=cancel`).
    case sleep
    /// The task was paused: its trigger was recorded and not run.
    case paused
    /// taskd is re-executing itself (`taskctl upgrade`): a Swift handler cannot outlive its image,
    /// so it is cancelled, and run again by the new one.
    case upgrade
    /// taskd is being restarted (`systemctl restart`): the run is cancelled, and run again after.
    case restart
    /// Another host of the fleet holds or ran the slot (`Fleet=once`): the run does not happen here.
    case elsewhere
    /// The host could not renew its claim on the slot in etcd in time (a partition, a paused
    /// process): another host may take the slot over, so this run stops.
    case fenceLost = "fence-lost"
    /// etcd could not be reached to claim the slot, and the task says `FleetUnavailable=skip`.
    case fleetUnavailable = "fleet-unavailable"

    /// True when the run was cut short by taskd itself going away (a stop, an upgrade, a
    /// restart): its acknowledged wakes are not answered, and run again at the next start.
    public var keepsWakes: Bool { self == .shutdown || self == .upgrade || self == .restart }

    /// True when the run is to run again once taskd is back (an upgrade, a restart; not a stop).
    public var runsAgain: Bool { self == .upgrade || self == .restart }
}
