/// What the fleet tells the daemon of its own accord (`FleetClient`'s `events`).
public enum FleetEvent: Sendable {
    /// This host's lease was not renewed in time: the claims on it are lost, and these runs,
    /// which held them, must stop (reason `fence-lost`).
    case fenceLost(runIDs: [String], why: String)
    /// A slot this host lost to another was left undone by its holder (its lease expired): it may
    /// run here now (trigger `takeover`). `slot` is the slot's nominal time, CLOCK_REALTIME µs.
    case takeOver(task: String, slot: UInt64)
    /// etcd became unreachable, or reachable again: for the journal.
    case reachable(Bool, why: String)
}
