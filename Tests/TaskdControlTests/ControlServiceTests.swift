import Synchronization
import TaskdControl
import TaskdProtocol
import Testing

/// The control service's method table, driven with a fake scheduler: each call reaches its row with
/// typed parameters and leaves as a typed reply; an unknown method, an unknown interface and a bad
/// parameter get the `org.varlink.service` errors that name them.
@Suite("Control service: the method table")
struct ControlServiceTests {
    /// Collects replies as a client would read them off the wire.
    final class Channel: ReplyChannel {
        let peer: PeerCredentials
        let replies = Mutex<[VarlinkReply]>([])
        /// Every reply as it is sent, for a method that answers later (`Submit`).
        let (sent, sending) = AsyncStream.makeStream(of: VarlinkReply.self)
        var isClosed: Bool { false }

        init(uid: UInt32 = 0) { peer = PeerCredentials(pid: 1, uid: uid, gid: 0) }

        func send(_ reply: VarlinkReply) {
            let read = try! VarlinkReply(message: reply.encoded)
            replies.withLock { $0.append(read) }
            sending.yield(read)
        }
    }

    struct NullLog: ControlLog {
        func request(_ method: String, from peer: PeerCredentials) {}
        func rejected(_ method: String, from peer: PeerCredentials, reason: String) {}
    }

    let scheduler = FakeScheduler()
    var service: ControlService<FakeScheduler> {
        ControlService(
            scheduler: scheduler, log: NullLog(), product: "taskd-test", version: "9", rows: FakeScheduler.componentRows
        )
    }

    /// The one reply `call` got, served as the socket serves it.
    func call(_ method: String, _ parameters: [String: JSONValue] = [:], uid: UInt32 = 0) async -> VarlinkReply? {
        let channel = Channel(uid: uid)
        await scheduler.serve(VarlinkCall(method: method, parameters: parameters), with: service, on: channel)
        let replies = channel.replies.withLock { $0 }
        return replies.count == 1 ? replies[0] : nil
    }

    /// The first reply to a method that answers once its work is done, off the call.
    func callAnswered(_ method: String, _ parameters: [String: JSONValue]) async -> VarlinkReply? {
        let channel = Channel()
        await scheduler.serve(VarlinkCall(method: method, parameters: parameters), with: service, on: channel)
        for await reply in channel.sent { return reply }
        return nil
    }

    @Test("the table serves every method the two IDLs declare, and no other")
    func tableMatchesIDL() {
        func methods(_ idl: String, _ interface: String) -> [String] {
            idl.split(separator: "\n").filter { $0.hasPrefix("method ") }.map {
                interface + "." + $0.dropFirst(7).prefix { $0 != "(" }
            }
        }
        let declared =
            methods(SchedulerInterface.description, SchedulerInterface.name)
            + methods(VarlinkServiceInterface.description, VarlinkServiceInterface.name)
        #expect(service.methodNames == declared.sorted())
    }

    @Test("an unknown method is MethodNotFound, an unknown interface InterfaceNotFound, each naming it")
    func unknown() async {
        let method = await call(SchedulerInterface.name + ".Nope")
        #expect(method?.error == VarlinkServiceInterface.methodNotFound)
        #expect(method?.parameters == ["method": .string(SchedulerInterface.name + ".Nope")])
        let service = await call(VarlinkServiceInterface.name + ".Nope")
        #expect(service?.error == VarlinkServiceInterface.methodNotFound)
        let interface = await call("com.example.Other.Call")
        #expect(interface?.error == VarlinkServiceInterface.interfaceNotFound)
        #expect(interface?.parameters == ["interface": "com.example.Other"])
    }

    @Test("a bad parameter is InvalidParameter naming it, and the request is not made")
    func badParameter() async {
        for (parameters, name) in [
            (["target": 5] as [String: JSONValue], "target"), ([:], "target"), (["target": "x", "bogus": 1], "bogus"),
            (["target": "x", "payload": "text"], "payload"),
        ] {
            let reply = await call(SchedulerInterface.Wake.name, parameters)
            #expect(reply?.error == VarlinkServiceInterface.invalidParameter)
            #expect(reply?.parameters == ["parameter": .string(name)])
        }
        let limit = await call(SchedulerInterface.History.name, ["name": "x", "limit": 0])
        #expect(limit?.parameters == ["parameter": "limit"])
        #expect(await scheduler.heard.isEmpty)
    }

    @Test("typed parameters reach the scheduler and its result leaves as the typed reply")
    func typed() async throws {
        let wake = await call(SchedulerInterface.Wake.name, ["target": "known", "payload": .object(["a": 1])])
        #expect(try RunsReply(parameters: try #require(wake).parameters) == RunsReply(runs: []))
        let pause = await call(SchedulerInterface.Pause.name, ["target": "t", "untilUSec": 5, "note": "n"])
        #expect(try TaskNamesReply(parameters: try #require(pause).parameters).tasks == ["processing:t"])
        _ = await call(SchedulerInterface.History.name, ["name": "h"])
        let submit = await callAnswered(
            SchedulerInterface.Submit.name,
            ["command": .array(["/bin/echo", "hi"]), "inUSec": 2, "properties": .array(["A=1"])])
        #expect(submit?.error == SchedulerInterface.permissionDenied)
        #expect(
            await scheduler.heard == [
                #"wake known {"a":1}"#, "pause t 5 n", "history h 20", #"submit /bin/echo hi 2 ["A=1"]"#,
            ])
        let why = try SchedulerInterface.Why.Reply(
            parameters: try #require(await call(SchedulerInterface.Why.name, ["name": "w"])).parameters)
        #expect(why.task == "processing:w")
        #expect(why.reasons == [WhyReasonInfo(code: "paused", text: "paused by hand", messageId: "ab12")])
        let info = try VarlinkServiceInterface.GetInfo.Reply(
            parameters: try #require(await call(VarlinkServiceInterface.GetInfo.name)).parameters)
        #expect(info.product == "taskd-test" && info.version == "9")
        #expect(info.interfaces == [VarlinkServiceInterface.name, SchedulerInterface.name])
        let metrics = await call(SchedulerInterface.Metrics.name)
        #expect(metrics?.parameters == ["text": "# EOF\n"])
    }

    @Test("the scheduler's errors are the interface's: NoSuchTask, a refused peer")
    func errors() async {
        let missing = await call(SchedulerInterface.Wake.name, ["target": "other"])
        #expect(missing?.error == SchedulerInterface.noSuchTask)
        #expect(missing?.parameters == ["target": "other", "known": .array(["processing:known"])])
        let refused = await call(SchedulerInterface.List.name, uid: 666)
        #expect(refused?.error == SchedulerInterface.permissionDenied)
    }
}
