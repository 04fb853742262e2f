import Synchronization
import TaskScheduling
import TaskdControl
import TaskdProtocol
import Testing

@testable import TaskdDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's method table as the socket drives it: the daemon's own rows (`Follow`) and those its
/// components serve (`Fleet`, `Upgrade`, `Drain`, `Submit`), on manual ports.
@Suite("Daemon: the method table, with the components' rows", .serialized, .timeLimit(.minutes(1)))
struct DaemonMethodTableTests {
    typealias F = ManualDaemonFixture
    static let stranger = PeerCredentials(pid: 2, uid: 4242, gid: 4242)

    /// Serves `method` with `parameters` as `peer`; the first reply.
    static func call(
        _ f: F, _ method: String, _ parameters: [String: JSONValue] = [:], peer: PeerCredentials = F.root
    ) async throws -> VarlinkReply {
        let channel = RecordingChannel(peer: peer)
        let service = ControlService(daemon: f.daemon, journal: EventJournal(backend: f.recorder))
        _ = try await f.onLoop { _ in service.handle(VarlinkCall(method: method, parameters: parameters), on: channel) }
        // Through the wire form, as a client reads it.
        for await reply in channel.replies { return try VarlinkReply(message: reply.encoded) }
        throw ReplyError(name: "no reply", parameters: [:])
    }

    @Test("every method of the IDL is served: the components' rows stand beside the daemon's")
    func everyMethod() async {
        let f = await F([F.task("t")])
        let service = ControlService(daemon: f.daemon, journal: EventJournal(backend: f.recorder))
        let declared = [
            SchedulerInterface.Wake.name, SchedulerInterface.Submit.name, SchedulerInterface.Drain.name,
            SchedulerInterface.EndDrain.name, SchedulerInterface.Upgrade.name, SchedulerInterface.Fleet.name,
            SchedulerInterface.Follow.name,
        ]
        for method in declared { #expect(service.methodNames.contains(method), "\(method)") }
    }

    @Test("Follow: a run in progress by its id, and NoSuchRun for an id unknown")
    func follow() async throws {
        let f = await F([F.task("t")])
        let run = try #require(try await f.wake("t").first)
        let reply = try await Self.call(f, SchedulerInterface.Follow.name, ["runIds": .array([.string(run.runId)])])
        let runs = try RunsReply(parameters: reply.parameters).runs
        #expect(runs.map(\.runId) == [run.runId] && runs.first?.state == .running)
        let unknown = try await Self.call(f, SchedulerInterface.Follow.name, ["runIds": .array(["nope"])])
        #expect(unknown.error == SchedulerInterface.noSuchRun)
    }

    @Test("Fleet: none without FleetEndpoints=; the fleet's own answer with one")
    func fleet() async throws {
        let none = await F([F.task("t")])
        let empty = try SchedulerInterface.Fleet.Reply(
            parameters: try await Self.call(none, SchedulerInterface.Fleet.name).parameters)
        #expect(empty.host == nil && empty.hosts.isEmpty)
        let f = await F([F.task("t")], fleet: true)
        let reply = try SchedulerInterface.Fleet.Reply(
            parameters: try await Self.call(f, SchedulerInterface.Fleet.name).parameters)
        #expect(reply.name == "test" && reply.host == f.fleet.host && reply.hosts == [f.fleet.host])
    }

    @Test("Upgrade: refused to a peer that is no admin; a call waiting hears why the upgrade did not happen")
    func upgrade() async throws {
        let f = await F([F.task("t")])
        let refused = try await Self.call(f, SchedulerInterface.Upgrade.name, peer: Self.stranger)
        #expect(refused.error == SchedulerInterface.permissionDenied)
        // The first call raises SIGUSR2, which taskd's signal loop turns into the upgrade: ignored here.
        let previous = signal(SIGUSR2, SIG_IGN)
        defer { signal(SIGUSR2, previous) }
        let channel = RecordingChannel(peer: F.root)
        let service = ControlService(daemon: f.daemon, journal: EventJournal(backend: f.recorder))
        _ = try await f.onLoop { _ in
            service.handle(VarlinkCall(method: SchedulerInterface.Upgrade.name, parameters: [:]), on: channel)
        }
        _ = try await f.onLoop { $0.component(Upgrades.self).upgradeFailed("no new image", in: $0) }
        var answer: VarlinkReply?
        for await reply in channel.replies {
            answer = reply
            break
        }
        #expect(answer?.error == SchedulerInterface.upgradeFailed)
        #expect(answer?.parameters["reason"] == .string("no new image"))
    }

    @Test("Drain and EndDrain through their rows: answered at once with no run active; refused to a stranger")
    func drain() async throws {
        let f = await F([F.task("t")])
        let drained = try SchedulerInterface.Drain.Reply(
            parameters: try await Self.call(f, SchedulerInterface.Drain.name).parameters)
        #expect(drained.drained && drained.runs.isEmpty)
        let ended = try SchedulerInterface.EndDrain.Reply(
            parameters: try await Self.call(f, SchedulerInterface.EndDrain.name).parameters)
        #expect(ended.waiting == 0)
        let refused = try await Self.call(f, SchedulerInterface.Drain.name, peer: Self.stranger)
        #expect(refused.error == SchedulerInterface.permissionDenied)
    }

    @Test("Submit through its row: a stranger not in SubmitUsers= is refused with taskd's message")
    func submit() async throws {
        let f = await F([F.task("t")])
        let refused = try await Self.call(
            f, SchedulerInterface.Submit.name, ["command": .array(["/bin/true"])], peer: Self.stranger)
        #expect(refused.error == SchedulerInterface.permissionDenied)
        #expect(refused.parameters["reason"]?.stringValue?.contains("may not submit") == true)
    }
}
