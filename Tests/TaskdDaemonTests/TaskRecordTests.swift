import TaskScheduling
import TaskdProtocol
import Testing

@testable import TaskdDaemon

/// The record file: its hand-assembled bytes equal the generic JSON encoding, and read back.
struct TaskRecordTests {
    static let key = TaskKey(kind: "appRefresh", identifier: "we\"ird\nname")

    static func run(_ n: Int) -> RunInfo {
        let json: JSONValue = .object([
            "task": "x", "kind": "appRefresh", "runId": .string("r\(n)"), "state": "completed", "trigger": "wake",
        ])
        var info = RunInfo(json: json)!
        info.startedUSec = UInt64(n) * 1_000
        info.error = n % 3 == 0 ? "line\n\"quoted\"\u{1}" : nil
        info.result = n % 2 == 0 ? JSONValue.object(["n": .int(Int64(n))]) : nil
        return info
    }

    /// What the file held before the encoder was hand-assembled: the generic object encoding.
    static func generic(_ record: TaskRecord, _ key: TaskKey) -> [UInt8] {
        var o: [String: JSONValue] = [
            "version": .int(1), "task": .string(key.identifier), "kind": .string(key.kind),
            "history": .array(record.history.map(\.json)),
        ]
        if let t = record.lastTriggerUSec { o["lastTriggerUSec"] = .int(Int64(t)) }
        if let t = record.requestedUSec { o["requestedUSec"] = .int(Int64(t)) }
        return Array((JSONValue.object(o).description + "\n").utf8)
    }

    @Test("bytes equal the generic encoding through appends past History=, and decode to the same record")
    func encodingMatchesAndRoundTrips() throws {
        var record = TaskRecord()
        #expect(record.encoded(Self.key) == Self.generic(record, Self.key))
        for n in 0..<12 {
            record.append(Self.run(n), keep: 5)
            record.lastTriggerUSec = n % 4 == 0 ? nil : UInt64(n) * 7
            record.requestedUSec = n % 3 == 0 ? nil : UInt64(n) * 11
            #expect(record.history.count == min(n + 1, 5))
            let bytes = record.encoded(Self.key)
            #expect(bytes == Self.generic(record, Self.key))
            let decoded = try #require(TaskRecord(decoding: bytes))
            #expect(decoded == record)
            #expect(decoded.encoded(Self.key) == bytes)
        }
        #expect(record.history.map(\.runId) == ["r7", "r8", "r9", "r10", "r11"])
    }

    @Test("a wake's log line equals the generic encoding, with and without its optional members, and parses back")
    func wakeLineMatchesAndParses() throws {
        for full in [false, true] {
            let wake = WakeRecord(
                id: "00ff", key: Self.key, wakeID: full ? "w\"1" : nil, payload: full ? #"{"a":1}"# : nil,
                acknowledgedUSec: 1_795_000_000_000_001)
            var o: [String: JSONValue] = [
                "add": .string(wake.id), "kind": .string(wake.key.kind), "task": .string(wake.key.identifier),
                "atUSec": .int(Int64(wake.acknowledgedUSec)),
            ]
            if let id = wake.wakeID { o["wakeId"] = .string(id) }
            if let payload = wake.payload { o["payload"] = .string(payload) }
            #expect(wake.line == JSONValue.object(o).bytes + [UInt8(ascii: "\n")])
            let line = String(decoding: wake.line.dropLast(), as: UTF8.self)
            let parsed = try #require(WakeRecord.parse(Substring(line)))
            #expect(parsed.added == wake)
        }
    }
}
