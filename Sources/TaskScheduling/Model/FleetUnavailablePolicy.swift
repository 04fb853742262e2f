/// What a run of a `Fleet=once` or `Fleet=max:N` task does when etcd cannot be reached to claim
/// its slot (`FleetUnavailable=`); journaled either way, and a run that does not happen here ends
/// `cancelled`, reason `fleet-unavailable`.
public enum FleetUnavailablePolicy: String, Hashable, Sendable, CaseIterable {
    /// The run does not happen here (cancelled, reason `fleet-unavailable`): never twice, maybe never.
    case skip
    /// The run happens here anyway, unclaimed: never missed, maybe twice.
    case local
    /// The run waits here, asking etcd again every second, and starts once its claim is won; it
    /// gives up (as `skip`) after `MaxDeferSec=` from its start, if set, or at its budget's end:
    /// never twice, maybe late.
    case wait
}
