import TaskScheduling
import Testing

@testable import TaskdProtocol

/// `RunInfo`'s encoder and decoder (the IDL's, and the history's in the task record) keep every
/// property: a new one fails here until both carry it.
struct RunInfoTests {
    /// A `RunInfo` as `init(json:)` leaves the properties the object does not name.
    static let plain = RunInfo(
        json: .object(["task": "", "kind": "", "runId": "", "state": "queued", "trigger": "startup"]))!

    /// One with every property set to another value than `plain`'s.
    static var full: RunInfo {
        var info = plain
        info.task = "backup"
        info.kind = "processing"
        info.runId = "0123456789abcdef"
        info.trigger = .wake
        info.attempt = 3
        info.state = .failed
        info.disposition = .coalesced
        info.wakeId = "w\n1"
        info.queuedUSec = 1_795_000_000_000_001
        info.scheduledUSec = 1_795_000_000_000_000
        info.startedUSec = 1_795_000_000_000_101
        info.deadlineUSec = 1_795_000_030_000_101
        info.budgetUSec = 30_000_000
        info.waitedUSec = 100
        info.endedUSec = 1_795_000_000_100_101
        info.durationUSec = 100_000
        info.exitStatus = -2
        info.signal = "SIGKILL"
        info.cancelReason = "budget"
        info.error = "it broke: \u{1}é"
        info.stale = true
        info.result = .object(["b": .array([.int(1), .null]), "a": .string("x")])
        info.waitingFor = "on AC power"
        info.previousRunId = "fedcba9876543210"
        info.retryInUSec = 5_000_000
        info.partial = true
        info.progressCompleted = 3
        info.progressTotal = 10
        info.status = "copying"
        info.failureReason = "oom"
        info.cpuUSec = 1
        info.memoryPeakBytes = 2
        info.ioReadBytes = 3
        info.ioWriteBytes = 4
        info.fleetHost = "host-b"
        info.fenceToken = 42
        return info
    }

    @Test("a RunInfo with every property set reads back equal from its JSON, and the test sets every property")
    func everyPropertyRoundTrips() throws {
        let plainValues = Dictionary(
            uniqueKeysWithValues: Mirror(reflecting: Self.plain).children.map { ($0.label!, "\($0.value)") })
        let unset = Mirror(reflecting: Self.full).children.filter { "\($0.value)" == plainValues[$0.label!] }
        #expect(unset.map(\.label!).isEmpty, "a new property of RunInfo belongs in `full`")
        let info = Self.full
        #expect(RunInfo(json: try JSONParser.parse(info.encodedJSON)) == info)
        #expect(info.encodedJSON == info.json.bytes)
    }
}
