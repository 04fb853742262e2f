import TaskScheduling
import Testing

@testable import TaskdProtocol

/// The direct writers against the generic encoding they replace on hot paths: same bytes.
struct JSONObjectWriterTests {
    /// A run with every optional member set (`full`) or none of them, with strings that need escapes.
    static func run(full: Bool) -> RunInfo {
        let minimal: JSONValue = .object([
            "task": "t\"1", "kind": "appRefresh", "runId": "0123456789abcdef", "state": "failed", "trigger": "timer",
        ])
        var info = RunInfo(json: minimal)!
        info.trigger = .wake
        info.attempt = 3
        info.disposition = .coalesced
        info.queuedUSec = 1_795_000_000_000_001
        info.budgetUSec = 30_000_000
        info.stale = full
        guard full else { return info }
        info.wakeId = "w\n1"
        info.startedUSec = 1_795_000_000_000_101
        info.deadlineUSec = 1_795_000_030_000_101
        info.waitedUSec = 100
        info.endedUSec = 1_795_000_000_100_101
        info.durationUSec = 100_000
        info.exitStatus = -2
        info.signal = "SIGKILL"
        info.cancelReason = "budget"
        info.error = "it broke: \u{1}é"
        info.result = JSONValue.object(["b": .array([.int(1), .null]), "a": .string("x")])
        return info
    }

    @Test("a run's one encoding reads back as the same run and prints as the generic encoder prints its value")
    func runInfoMatchesTheGenericEncoding() throws {
        for full in [false, true] {
            let info = Self.run(full: full)
            #expect(info.encodedJSON == info.json.bytes)
            #expect(RunInfo(json: try JSONParser.parse(info.encodedJSON)) == info)
        }
    }

    @Test("a reply of encoded parameters is the text of the same reply built from values")
    func encodedParametersMatchTheGenericReply() {
        let runs = [Self.run(full: true), Self.run(full: false)]
        for continues in [false, true] {
            var parameters = JSONObjectWriter()
            parameters.json("runs", JSONObjectWriter.array(runs.map(\.encodedJSON)))
            let fast = VarlinkReply(encodedParameters: parameters.finish(), continues: continues)
            let generic = VarlinkReply(parameters: ["runs": .array(runs.map(\.json))], continues: continues)
            #expect(fast.encoded == generic.encoded)
        }
    }

    @Test("members of every kind, in sorted order, print as JSONValue prints the object")
    func membersOfEveryKind() {
        var o = JSONObjectWriter(appendingTo: Array("x".utf8))
        o.bool("a", false)
        o.int("b", Int64.min)
        o.int("c", UInt64.max)  // clamped
        o.string("d", nil)  // absent
        o.json("e", JSONObjectWriter.array([]))
        o.string("f", "\"")
        o.value("g", .double(0.5))
        let expected: JSONValue = .object([
            "a": false, "b": .int(.min), "c": .int(.max), "e": .array([]), "f": "\"", "g": .double(0.5),
        ])
        #expect(o.finish() == Array("x".utf8) + expected.bytes)
    }
}
