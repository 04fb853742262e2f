import TaskdFleet
import TaskdProtocol

/// The fleet as the daemon sees it: claims on runs' slots, coordinated through etcd (`FleetClient`
/// in taskd). Completions and events come on threads of the fleet's own.
package protocol FleetPort: Sendable {
    /// This host's name in the fleet.
    var host: String { get }
    /// `Fleet=once`: claims one slot (its nominal time, CLOCK_REALTIME µs) of a task for a run.
    func claimSlot(task: String, slot: UInt64, runID: String, completion: @escaping @Sendable (FleetClaim) -> Void)
    /// The run of a claimed slot ended: done if its handler ran, else the claim is given back.
    func finishSlot(task: String, slot: UInt64, token: UInt64, runID: String, ran: Bool)
    /// `Fleet=max:N`: one of the task's `limit` places, when one is free.
    func acquire(task: String, limit: Int, runID: String, completion: @escaping @Sendable (FleetClaim) -> Void)
    /// Gives the run's place back (it ended, or it was cancelled while it waited).
    func release(task: String, runID: String)
    /// A clean stop: this host's claims go now.
    func stop()
    /// The fleet as etcd has it now: its hosts and the claims held.
    func snapshot(completion: @escaping @Sendable (Result<SchedulerInterface.Fleet.Reply, FleetError>) -> Void)
}

extension FleetClient: FleetPort {}
