import Synchronization
import TaskdFleet

/// The fleet client the daemon made at its start, for the clean stop that revokes its lease.
final class FleetSlot: Sendable {
    let client = Mutex<FleetClient?>(nil)
}
