import Synchronization
import TaskdConfig
import TaskdFleet

/// The fleet client the daemon made at its start, for the clean stop that revokes its lease.
final class FleetSlot: Sendable {
    let client = Mutex<FleetClient?>(nil)

    /// What makes the daemon's fleet client (and keeps it here); nil when `settings` name no
    /// etcd endpoints.
    func maker(_ settings: FleetSettings) -> (@Sendable (@escaping @Sendable (FleetEvent) -> Void) -> any FleetPort)? {
        guard !settings.endpoints.isEmpty else { return nil }
        return { @Sendable [self] events in
            let client = FleetClient(settings: settings, host: FleetClient.hostName(settings), events: events)
            self.client.withLock { $0 = client }
            return client
        }
    }
}
