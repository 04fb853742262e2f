/// What a run of a `Fleet=once` or `Fleet=max:N` task does when etcd cannot be reached to claim
/// its slot (`FleetUnavailable=`); journaled with reason `fleet-unavailable` either way.
public enum FleetUnavailablePolicy: String, Hashable, Sendable, CaseIterable {
    /// The run does not happen here (cancelled, reason `fleet-unavailable`): never twice, maybe never.
    case skip
    /// The run happens here anyway, unclaimed: never missed, maybe twice.
    case local
}
