/// How a claim on a run's slot went (`FleetClient.claimSlot`, `FleetClient.acquire`).
public enum FleetClaim: Hashable, Sendable {
    /// This host holds it; the claim's fence token (the etcd revision that created the claim).
    case won(token: UInt64)
    /// Another host holds it or ran it: that host, and its claim's token.
    case lost(host: String, token: UInt64)
    /// etcd could not be reached, or refused; why.
    case unavailable(String)
}
