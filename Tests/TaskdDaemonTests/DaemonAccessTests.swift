import TaskScheduling
import TaskdConfig
import TaskdProtocol
import TaskdSystem
import Testing

@testable import TaskdDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Who may use the daemon: `AllowUsers=`/`AllowGroups=` for the socket, root (or taskd's user)
/// for reloads, `WakeUsers=`/`WakeGroups=` for a task's wakes, cancels and pauses.
@Suite("Daemon on manual ports: access", .timeLimit(.minutes(1)))
struct DaemonAccessTests {
    typealias F = ManualDaemonFixture

    /// A user that is neither root nor the one running the tests (whom every check allows).
    static let stranger: UInt32 = geteuid() == 4242 ? 4343 : 4242

    static func peer(uid: UInt32, gid: UInt32 = 100, groups: [UInt32] = []) -> PeerCredentials {
        PeerCredentials(pid: 7, uid: uid, gid: gid, groups: groups)
    }

    @Test("AllowUsers=/AllowGroups= admit root, the users named, and members of the groups named, primary or not")
    func checkAccess() async throws {
        let access = AccessList(users: [Self.stranger + 1], groups: [50])
        let f = await F([F.task("fetch")], settings: F.settings(access: access))
        let allowed = [
            F.root, Self.peer(uid: Self.stranger + 1), Self.peer(uid: Self.stranger, gid: 50),
            Self.peer(uid: Self.stranger, groups: [10, 50]),
        ]
        for peer in allowed { try await f.onLoop { try $0.checkAccess(peer) } }
        let outsider = Self.peer(uid: Self.stranger, groups: [10])
        await #expect(throws: DaemonError.self) { try await f.onLoop { try $0.checkAccess(outsider) } }
    }

    @Test("without AllowUsers=/AllowGroups= anyone who can connect may use the socket, until a reload sets them")
    func accessFollowsReload() async throws {
        let f = await F([F.task("fetch")])
        let stranger = Self.peer(uid: Self.stranger)
        try await f.onLoop { try $0.checkAccess(stranger) }
        f.nextConfig.value = LoadedConfig(
            daemon: F.settings(access: AccessList(users: [0])), tasks: [F.task("fetch")])
        _ = try await f.daemon.reload().get()
        await #expect(throws: DaemonError.self) { try await f.onLoop { try $0.checkAccess(stranger) } }
    }

    @Test("only root and taskd's own user may reload")
    func checkAdmin() async throws {
        let f = await F([F.task("fetch")])
        try await f.onLoop { try $0.checkAdmin(F.root) }
        try await f.onLoop { try $0.checkAdmin(Self.peer(uid: geteuid())) }
        await #expect(throws: DaemonError.self) {
            try await f.onLoop { try $0.checkAdmin(Self.peer(uid: Self.stranger)) }
        }
    }

    @Test("WakeUsers= lets the users named wake, cancel and pause the task; others are refused and nothing runs")
    func wakeAccess() async throws {
        let waker = Self.stranger + 1
        let f = await F([F.task("guarded") { $0.wakeAccess = AccessList(users: [waker]) }, F.task("open")])
        let stranger = Self.peer(uid: Self.stranger)
        await #expect(throws: DaemonError.self) { _ = try await f.wake("guarded", peer: stranger) }
        #expect(f.launcher.started.isEmpty)
        #expect(try await f.wake("open", peer: stranger).map(\.state) == [.running])
        let id = try await f.wake("guarded", peer: Self.peer(uid: waker))[0].runId
        await #expect(throws: DaemonError.self) { _ = try await f.onLoop { try $0.cancel(target: id, peer: stranger) } }
        await #expect(throws: DaemonError.self) {
            _ = try await f.onLoop { try $0.pause(target: "guarded", until: nil, note: "", peer: stranger) }
        }
        #expect(f.launcher.signals.isEmpty)
        #expect(try await f.status("guarded").paused == false)
        #expect(try await f.onLoop { try $0.cancel(target: id, peer: F.root) }.map(\.runId) == [id])
    }
}
