import TaskScheduling

/// A run of a fleet task (`Fleet=once`, `Fleet=max:N`) between its start and its end: its claim,
/// pending until etcd answers, and the start event the journal hears only once the claim is won.
struct FleetHold {
    var key: TaskKey
    var mode: FleetMode
    /// `Fleet=once`: the slot's nominal time, CLOCK_REALTIME µs.
    var slot: UInt64
    var unavailable: FleetUnavailablePolicy
    /// True until the claim is decided: won, lost, or given up.
    var pending = true
    /// The claim's fence token, once won (nil: run unclaimed, `FleetUnavailable=local`).
    var token: UInt64?
    /// The run's `started` event, held back while the claim is pending.
    var startEvent: SchedulerEvent?
    /// `FleetUnavailable=wait`, etcd unreachable: why, when the claim is asked again and when the
    /// run gives up (`MaxDeferSec=` after its start; nil: never), CLOCK_MONOTONIC µs. No request
    /// is on its way while `retryAt` is set.
    var unreachable: String?
    var retryAt: UInt64?
    var giveUpAt: UInt64?
}
