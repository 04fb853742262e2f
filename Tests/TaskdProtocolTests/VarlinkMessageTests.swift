import Testing

@testable import TaskdProtocol

/// Every method's typed parameters and reply survive the wire form (encoded, framed as a message,
/// decoded), the fast writers print what `JSONValueEncoder` would, and a bad parameter is named.
@Suite("Varlink messages: typed parameters and replies through the wire")
struct VarlinkMessageTests {
    static let run = RunInfo(
        json: .object([
            "task": "sync", "kind": "processing", "runId": "0123456789abcdef0123456789abcdef", "trigger": "wake",
            "state": "completed", "disposition": "started", "attempt": 2, "queuedUSec": 1_000, "budgetUSec": 5_000,
            "exitStatus": 0, "result": .object(["n": 1]), "partial": true,
        ]))!
    static let task = TaskInfo(
        json: .object([
            "name": "sync", "kind": "processing", "description": "Sync \"all\"", "handler": "command",
            "budgetUSec": 5_000, "cancelGraceUSec": 100, "overlap": "queue", "maxAttempts": 3,
            "last": run.json, "recent": .array([run.json]), "queue": .array([]), "consecutiveFailures": 1,
            "pausedSinceUSec": 7, "pauseNote": "maintenance", "nextElapseUSec": 9,
        ]))!

    /// `reply` as the server sends it, read back as the client does.
    static func roundTrip<Reply: VarlinkReplyParameters & Equatable>(_ reply: Reply) throws -> Reply {
        let message = VarlinkReply(encodedParameters: try reply.encodedParameters()).encoded
        return try Reply(parameters: try VarlinkReply(message: message).parameters)
    }

    @Test("every reply type survives the wire")
    func replies() throws {
        #expect(try Self.roundTrip(RunsReply(runs: [Self.run])) == RunsReply(runs: [Self.run]))
        let list = SchedulerInterface.List.Reply(tasks: [Self.task, Self.task])
        #expect(try Self.roundTrip(list) == list)
        let status = SchedulerInterface.Status.Reply(task: Self.task)
        #expect(try Self.roundTrip(status) == status)
        let reload = SchedulerInterface.Reload.Reply(added: ["a:x"], removed: [], changed: ["b:y"], unchanged: 4)
        #expect(try Self.roundTrip(reload) == reload)
        #expect(
            try Self.roundTrip(TaskNamesReply(tasks: ["processing:sync"])) == TaskNamesReply(tasks: ["processing:sync"])
        )
        let why = SchedulerInterface.Why.Reply(
            task: "processing:sync",
            reasons: [WhyReasonInfo(code: "paused", text: "paused by hand", atUSec: 12, messageId: "ab")])
        #expect(try Self.roundTrip(why) == why)
        let metrics = SchedulerInterface.Metrics.Reply(text: "# TYPE x counter\nx_total 1\n# EOF\n")
        #expect(try Self.roundTrip(metrics) == metrics)
        let info = VarlinkServiceInterface.GetInfo.Reply(
            vendor: "taskd", product: "taskd", version: "1", url: "file:///x", interfaces: ["a", "b"])
        #expect(try Self.roundTrip(info) == info)
        let description = VarlinkServiceInterface.GetInterfaceDescription.Reply(description: "interface a.b\n")
        #expect(try Self.roundTrip(description) == description)
    }

    @Test("the replies written straight to bytes print what JSONValueEncoder prints")
    func fastWriters() throws {
        func same(_ reply: some VarlinkReplyParameters) throws {
            #expect(try reply.encodedParameters() == (try JSONValueEncoder().encode(reply)).bytes)
        }
        try same(RunsReply(runs: [Self.run, Self.run]))
        try same(SchedulerInterface.List.Reply(tasks: [Self.task]))
        try same(SchedulerInterface.Status.Reply(task: Self.task))
        try same(SchedulerInterface.Metrics.Reply(text: "a \"quoted\"\n\\ line"))
    }

    @Test("parameters survive the wire, and nil optionals are left out")
    func parameters() throws {
        let wake = SchedulerInterface.Wake.Parameters(target: "sync", id: "7", payload: ["city": "Paris"])
        let call = VarlinkCall(method: SchedulerInterface.Wake.name, parameters: wake.encodedParameters)
        let received = try VarlinkCall(message: call.encoded)
        #expect(try SchedulerInterface.Wake.Parameters(parameters: received.parameters) == wake)
        #expect(wake.encodedParameters["followRetries"] == nil)
        let pause = SchedulerInterface.Pause.Parameters(target: "sync", untilUSec: 99, note: "n")
        #expect(try SchedulerInterface.Pause.Parameters(parameters: pause.encodedParameters) == pause)
        #expect(try NoParameters(parameters: [:]) == NoParameters())
        #expect(NoParameters().encodedParameters == [:])
    }

    @Test("Wake's parameters read by hand are what the generic decoder reads, and refuse what it refuses")
    func wakeByHand() {
        typealias P = SchedulerInterface.Wake.Parameters
        let cases: [[String: JSONValue]] = [
            ["target": "x"], ["target": "x", "id": "7", "payload": .object(["a": 1]), "followRetries": false],
            ["target": "x", "id": .null, "payload": .null, "followRetries": .null], [:], ["target": 5],
            ["target": ""], ["target": .null], ["target": "x", "zz": 1, "bogus": 2], ["target": "x", "id": 7],
            ["target": "x", "payload": "text"], ["target": "x", "payload": .array([])],
            ["target": "x", "followRetries": 1],
        ]
        for parameters in cases {
            /// The parameters read, or the name of the one refused.
            func read(_ body: () throws(ParameterError) -> P) -> String {
                do { return "\(try body())" } catch { return "refused " + error.name }
            }
            #expect(
                read { () throws(ParameterError) in try P(parameters: parameters) }
                    == read { () throws(ParameterError) in try P(decoding: parameters) }, "\(parameters)")
        }
    }

    @Test("a bad parameter is named: unknown, missing, of the wrong type, null, empty or out of range")
    func badParameters() {
        func name<P: VarlinkParameters>(_ type: P.Type, _ parameters: [String: JSONValue]) -> String? {
            do {
                _ = try P(parameters: parameters)
                return nil
            } catch {
                return error.name
            }
        }
        #expect(name(SchedulerInterface.Wake.Parameters.self, ["target": "x", "zz": 1, "bogus": 2]) == "bogus")
        #expect(name(SchedulerInterface.Wake.Parameters.self, [:]) == "target")
        #expect(name(SchedulerInterface.Wake.Parameters.self, ["target": 5]) == "target")
        #expect(name(SchedulerInterface.Wake.Parameters.self, ["target": .null]) == "target")
        #expect(name(SchedulerInterface.Wake.Parameters.self, ["target": ""]) == "target")
        #expect(name(SchedulerInterface.Wake.Parameters.self, ["target": "x", "payload": "text"]) == "payload")
        #expect(name(SchedulerInterface.Wake.Parameters.self, ["target": "x", "id": .null]) == nil)
        #expect(name(SchedulerInterface.History.Parameters.self, ["name": "x", "limit": 0]) == "limit")
        #expect(name(SchedulerInterface.Pause.Parameters.self, ["target": "x", "untilUSec": -1]) == "untilUSec")
        #expect(name(NoParameters.self, ["extra": true]) == "extra")
    }
}
