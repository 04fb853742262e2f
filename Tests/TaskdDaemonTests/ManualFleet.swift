import Synchronization
import TaskdFleet
import TaskdProtocol
import TaskdTestSupport

@testable import TaskdDaemon

/// A `FleetPort` that asks no etcd: it records the claims the daemon makes and the slots it gives
/// back, and the test answers each claim (as etcd would, or as its absence would) and sends events.
final class ManualFleet: FleetPort {
    /// A claim the daemon asked for and no answer was given yet.
    struct Ask: Sendable {
        var task: String
        var runID: String
        /// The slot of a `Fleet=once` claim; nil for a `max:N` place.
        var slot: UInt64?
        var answer: @Sendable (FleetClaim) -> Void
    }

    private struct State {
        var asks: [Ask] = []
        var asked = 0
        var finished: [(runID: String, ran: Bool)] = []
        var released: [String] = []
        var events: (@Sendable (FleetEvent) -> Void)?
    }

    private let state = Mutex(State())
    let host = "here"

    /// The port the daemon makes at its start (`DaemonPorts.fleet`).
    func connect(_ events: @escaping @Sendable (FleetEvent) -> Void) -> any FleetPort {
        state.withLock { $0.events = events }
        return self
    }

    func claimSlot(task: String, slot: UInt64, runID: String, completion: @escaping @Sendable (FleetClaim) -> Void) {
        state.withLock {
            $0.asks.append(Ask(task: task, runID: runID, slot: slot, answer: completion))
            $0.asked += 1
        }
    }

    func finishSlot(task: String, slot: UInt64, token: UInt64, runID: String, ran: Bool) {
        state.withLock { $0.finished.append((runID, ran)) }
    }

    func acquire(task: String, limit: Int, runID: String, completion: @escaping @Sendable (FleetClaim) -> Void) {
        state.withLock {
            $0.asks.append(Ask(task: task, runID: runID, slot: nil, answer: completion))
            $0.asked += 1
        }
    }

    func release(task: String, runID: String) { state.withLock { $0.released.append(runID) } }
    func stop() {}

    func snapshot(completion: @escaping @Sendable (Result<SchedulerInterface.Fleet.Reply, FleetError>) -> Void) {
        completion(.success(.init(name: "test", host: host, hosts: [host], claims: [])))
    }

    /// The claims waiting for an answer, oldest first; how many claims were asked in all.
    var asks: [Ask] { state.withLock { $0.asks } }
    var asked: Int { state.withLock { $0.asked } }
    /// The slots given back or marked done (`ran`), and the places released, in order.
    var finished: [(runID: String, ran: Bool)] { state.withLock { $0.finished } }
    var released: [String] { state.withLock { $0.released } }

    /// Answers the oldest waiting claim, on the event loop, as etcd's answer would come.
    func answer(_ claim: FleetClaim) async {
        let ask = state.withLock { $0.asks.isEmpty ? nil : $0.asks.removeFirst() }
        guard let ask else { return }
        await ManualClock.onLoop { ask.answer(claim) }
    }

    /// Tells the daemon of `event`, on the event loop.
    func send(_ event: FleetEvent) async {
        let events = state.withLock { $0.events }
        await ManualClock.onLoop { events?(event) }
    }
}
