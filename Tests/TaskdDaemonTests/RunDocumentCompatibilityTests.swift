import TaskScheduling
import TaskdProtocol
import Testing

@testable import TaskdDaemon

/// The run document read and written across versions: a snapshot or a cut run in the form the
/// taskd before the document wrote (an upgrade's hand-off, a state folder) is read, and what this
/// taskd writes is read by that taskd (its decoders, copied below as they were).
struct RunDocumentCompatibilityTests {
    /// A snapshot as the taskd before the run document wrote it (`RunSnapshot`'s own fields).
    static let oldSnapshot = """
        {"attempt":2,"blocksSleep":true,"budget":60000000,"cancelAt":55000000,"cancelGrace":5000000,\
        "fenceToken":7,"fenced":false,"fleetHost":"h","id":"a","identifier":"backup","inProcess":false,\
        "kind":"processing","killAt":61000000,"phase":"cancelling","previousAttemptID":"p",\
        "progressCompleted":1,"progressReportedAt":1600,"progressStatus":"s","progressTimeout":9,\
        "progressTotal":4,"progressUntold":true,"queued":[1000,2000],"reason":"requested","records":["w"],\
        "scheduledRealtime":1900,"started":[1500,2500],"trigger":"timer","wakeID":"w"}
        """

    @Test("a snapshot of the taskd before the run document is read, every field of it")
    func readsOldSnapshot() throws {
        let snapshot = try JSONValueDecoder().decode(RunSnapshot.self, from: Self.oldSnapshot)
        var run = Run(
            id: "a", key: TaskKey(kind: "processing", identifier: "backup"), trigger: .timer, attempt: 2,
            wakeID: "w", queued: ClockReading(monotonic: 1000, realtime: 2000), budget: .seconds(60),
            cancelGrace: .seconds(5), inProcess: false)
        run.previousAttemptID = "p"
        run.scheduledRealtime = 1900
        run.started = ClockReading(monotonic: 1500, realtime: 2500)
        run.blocksSleep = true
        run.cancelAt = 55_000_000
        run.killAt = 61_000_000
        run.phase = .cancelling(.requested)
        run.records = ["w"]
        run.progress = RunProgress(completed: 1, total: 4, status: "s", reportedAt: 1600)
        run.progressTimeout = 9
        run.progressUntold = true
        run.fleetHost = "h"
        run.fenceToken = 7
        #expect(snapshot.run == run)
    }

    @Test("a snapshot whose trigger this taskd does not know keeps its id, without a run")
    func unknownTrigger() throws {
        let text = Self.oldSnapshot.replacing(#""trigger":"timer""#, with: #""trigger":"teleport""#)
        let snapshot = try JSONValueDecoder().decode(RunSnapshot.self, from: text)
        #expect(snapshot.run == nil && snapshot.id == "a" && snapshot.identifier == "backup")
    }

    /// `RunSnapshot`'s decoder before the run document: its fields, as it read them.
    struct OldSnapshot: Decodable {
        var id, kind, identifier, trigger, phase: String
        var attempt: Int
        var queued, started: [UInt64]
        var scheduledRealtime, progressTimeout: UInt64
        var inProcess, blocksSleep, fenced, progressUntold: Bool
        var records: [String]
        var budget, cancelGrace, cancelAt, killAt, fenceToken, progressReportedAt, progressToldAt: UInt64?
        var reason, wakeID, previousAttemptID, payload, fleetHost, progressStatus: String?
        var progressCompleted, progressTotal: Int64?
    }

    /// `CutRun`'s decoder before the run document.
    struct OldCutRun: Decodable, Equatable {
        var kind, identifier, runID: String
        var attempt: Int
        var wakeID, payload: String?
        var scheduledRealtime: UInt64
    }

    @Test("what this taskd writes, the taskd before the run document reads")
    func oldReadsNew() throws {
        var inProgress = RunDocumentTests.full
        inProgress.outcome = nil
        let snapshot = try JSONValueEncoder().encode(try #require(RunSnapshot(inProgress))).description
        let old = try JSONValueDecoder().decode(OldSnapshot.self, from: snapshot)
        #expect(
            old.phase == "cancelling" && old.reason == "condition-lost"
                && old.queued == [1_000_000, 1_765_000_000_000_000])

        let cut = try JSONValueEncoder().encode(CutRun(RunDocumentTests.full)).description
        let oldCut = try JSONValueDecoder().decode(OldCutRun.self, from: cut)
        let full = RunDocumentTests.full
        #expect(
            oldCut
                == OldCutRun(
                    kind: full.key.kind, identifier: full.key.identifier, runID: full.id, attempt: full.attempt,
                    wakeID: full.wakeID, payload: full.payload, scheduledRealtime: full.scheduledRealtime))
    }

    @Test("a cut run of the taskd before the run document is read: what the replay reads of it")
    func readsOldCutRun() throws {
        let text =
            #"{"kind":"processing","identifier":"backup","attempt":2,"wakeID":"w","payload":"{}","runID":"abc","scheduledRealtime":123}"#
        let cut = try JSONValueDecoder().decode(CutRun.self, from: text)
        #expect(cut.key == TaskKey(kind: "processing", identifier: "backup") && cut.attempt == 2)
        #expect(cut.wakeID == "w" && cut.payload == "{}" && cut.runID == "abc" && cut.scheduledRealtime == 123)
        #expect(try RunDocumentTests.roundTrip(cut) == cut)
    }
}
