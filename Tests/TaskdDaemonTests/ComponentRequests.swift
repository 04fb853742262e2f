import TaskScheduling
import TaskdProtocol

@testable import TaskdDaemon

/// The components' requests, as the method table's rows make them, for the daemon's tests.
extension Daemon {
    func submit(_ p: SchedulerInterface.Submit.Parameters, peer: PeerCredentials) async throws -> TaskInfo {
        try await component(Submissions.self).submit(p, peer: peer, in: self)
    }

    func drain(timeout: UInt64?, peer: PeerCredentials, reply: @escaping @Sendable (Bool, [RunInfo]) -> Void) throws {
        try component(Drains.self).drain(timeout: timeout, peer: peer, in: self, reply: reply)
    }

    func endDrain(peer: PeerCredentials) throws -> Int { try component(Drains.self).endDrain(peer: peer, in: self) }

    func recordLost(_ snapshots: [RunSnapshot]) { component(ActiveRuns.self).recordLost(snapshots, in: self) }

    func shutdown(restarting: Bool = false) async {
        await component(Upgrades.self).shutdown(restarting: restarting, in: self)
    }
}
