import Testing

@testable import TaskdProtocol

@Suite("Varlink: framing, calls, replies, the IDL")
struct VarlinkTests {
    @Test("messages split on NUL, across reads")
    func framing() throws {
        var f = VarlinkFramer()
        f.append(Array("{\"a\":1}".utf8) + [0] + Array("{\"b\"".utf8))
        #expect(try f.next() == Array("{\"a\":1}".utf8))
        #expect(try f.next() == nil)
        f.append(Array(":2}".utf8) + [0])
        #expect(try f.next() == Array("{\"b\":2}".utf8))
        #expect(f.pendingByteCount == 0)
    }

    @Test("a message over the limit is refused, with or without its NUL")
    func tooLarge() {
        var f = VarlinkFramer(maxMessageSize: 16)
        f.append([UInt8](repeating: 0x20, count: 17))
        #expect(throws: VarlinkFramingError.messageTooLarge(limit: 16)) { try f.next() }
        var g = VarlinkFramer(maxMessageSize: 16)
        g.append([UInt8](repeating: 0x20, count: 20) + [0])
        #expect(throws: VarlinkFramingError.messageTooLarge(limit: 16)) { try g.next() }
    }

    @Test("a call decodes method, parameters, more and oneway")
    func call() throws {
        let c = try VarlinkCall(
            message: Array(#"{"method":"io.taskd.Scheduler.Wake","parameters":{"target":"x"},"more":true}"#.utf8))
        #expect(c == VarlinkCall(method: "io.taskd.Scheduler.Wake", parameters: ["target": "x"], more: true))
        #expect(try VarlinkCall(message: c.encoded) == c)
    }

    @Test(arguments: [
        "[]", "{}", #"{"method":""}"#, #"{"method":1}"#, #"{"method":"a.B","parameters":[]}"#,
        #"{"method":"a.B","more":"yes"}"#, "not json",
    ])
    func badCalls(text: String) {
        #expect(throws: VarlinkCallError.self) { try VarlinkCall(message: Array(text.utf8)) }
    }

    @Test("replies carry parameters, an error name, and continues")
    func reply() throws {
        let r = VarlinkReply(parameters: ["runs": .array([])], continues: true)
        #expect(String(decoding: r.encoded, as: UTF8.self) == #"{"continues":true,"parameters":{"runs":[]}}"#)
        let e = VarlinkReply.error(SchedulerInterface.noSuchTask, ["target": "x"])
        #expect(try VarlinkReply(message: e.encoded) == e)
    }

    @Test("the IDL names the interface and declares every method a VarlinkMethod type stands for")
    func idl() throws {
        let text = SchedulerInterface.description
        #expect(text.hasPrefix("# taskd") && text.contains("interface io.taskd.Scheduler\n"))
        let declared = text.split(separator: "\n").filter { $0.hasPrefix("method ") }.map {
            SchedulerInterface.name + "." + $0.dropFirst(7).prefix { $0 != "(" }
        }
        let typed: [any VarlinkMethod.Type] = [
            SchedulerInterface.Wake.self, SchedulerInterface.List.self, SchedulerInterface.Status.self,
            SchedulerInterface.History.self, SchedulerInterface.Cancel.self, SchedulerInterface.Reload.self,
            SchedulerInterface.Pause.self, SchedulerInterface.Resume.self, SchedulerInterface.Why.self,
            SchedulerInterface.Metrics.self, SchedulerInterface.Drain.self, SchedulerInterface.EndDrain.self,
            SchedulerInterface.Follow.self, SchedulerInterface.Upgrade.self, SchedulerInterface.Fleet.self,
            SchedulerInterface.Submit.self,
        ]
        #expect(declared.sorted() == typed.map { $0.name }.sorted())
    }
}
