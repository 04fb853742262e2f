import TaskRuntime
import TaskScheduling
import TaskdProtocol
import Testing

@testable import TaskdDaemon

/// The run document (`Run: Codable`): a run with every stored property set survives each form
/// that keeps a run: the upgrade's snapshot and hand-off, the list of runs in progress, cut runs;
/// and the history and the task record keep exactly the subset of it they keep by design.
struct RunDocumentTests {
    static let start = ClockReading(monotonic: 1_000_000, realtime: 1_765_000_000_000_000)

    /// A run none of whose stored properties has the value a new run has (`plain`).
    static var full: Run {
        var run = Run(
            id: "run-1", key: TaskKey(kind: "processing", identifier: "backup"), trigger: .wake, attempt: 3,
            wakeID: "wake-1", payload: #"{"p":1}"#, queued: start, budget: .seconds(60), cancelGrace: .seconds(5),
            inProcess: true)
        run.previousAttemptID = "run-0"
        run.scheduledRealtime = start.realtime - 10
        run.started = start.advanced(by: 2_000)
        run.blocksSleep = true
        run.cancelAt = 50_000_000
        run.killAt = 61_000_000
        run.phase = .cancelling(.conditionLost)
        run.outcome = .cancelled
        run.termination = .signaled(15)
        run.ended = start.advanced(by: 9_000)
        run.fenced = true
        run.records = ["wake-1", "wake-2"]
        run.result = #"{"n":2}"#
        run.checkpoint = "page 3"
        run.checkpointRunID = "run-0"
        run.waitingFor = [
            .acPower, .idle(.seconds(300)), .freeSpace(path: "/var", bytes: 1 << 30),
            .pressure(.memory, permyriad: 1050, window: .oneMinute),
        ]
        run.group = "uploads"
        run.waitingForGroup = true
        run.after = ["run-x"]
        run.lostConditions = [.networkOnline, .batteryNotLow, .networkUnmetered]
        run.partial = true
        run.usage = RunUsage(cpuUSec: 1, memoryPeakBytes: 2, ioReadBytes: 3, ioWriteBytes: 4, source: "cgroup")
        run.progress = RunProgress(completed: 3, total: 10, status: "copying", reportedAt: start.monotonic + 3_000)
        run.progressTimeout = 30_000_000
        run.progressToldAt = start.monotonic + 3_500
        run.progressUntold = true
        run.fleetHost = "host-b"
        run.fenceToken = 42
        return run
    }

    /// A new run, as `Run.init` leaves it.
    static let plain = Run(
        id: "", key: TaskKey(kind: "", identifier: ""), trigger: .startup, attempt: 0,
        queued: ClockReading(monotonic: 0, realtime: 0), budget: .zero, cancelGrace: .zero, inProcess: false)

    /// The stored properties of `run` whose value is the one `plain` has.
    static func unset(in run: Run) -> Set<String> {
        let plainValues = Dictionary(
            uniqueKeysWithValues: Mirror(reflecting: plain).children.map { ($0.label!, "\($0.value)") })
        return Set(Mirror(reflecting: run).children.filter { "\($0.value)" == plainValues[$0.label!] }.map(\.label!))
    }

    static func roundTrip<T: Codable>(_ value: T) throws -> T {
        try JSONValueDecoder().decode(T.self, from: JSONValueEncoder().encode(value).description)
    }

    @Test("the test run sets every stored property of Run (a new property belongs here, and in each form)")
    func fullSetsEveryProperty() {
        #expect(Self.unset(in: Self.full).isEmpty)
    }

    @Test("the run document and a cut run, in cut-runs.json and in the hand-off, keep every stored property")
    func documentAndCutRuns() throws {
        #expect(try Self.roundTrip(Self.full) == Self.full)
        #expect(try Self.roundTrip(CutRun(Self.full)).run == Self.full)
        let file = CutRunsFile(directory: StateStoreTests.folder())
        #expect(file.save([CutRun(Self.full)]) == nil)
        #expect(file.take().runs.map(\.run) == [Self.full])
    }

    /// What a snapshot leaves out by design: it is of a run in progress, which has no outcome,
    /// and it leaves out the checkpoint the handler was handed as it started (see `RunSnapshot`).
    static let notInSnapshot: Set<String> = ["outcome", "checkpoint"]

    @Test("a snapshot, in the hand-off and in active-runs.json, keeps every stored property but notInSnapshot")
    func snapshot() throws {
        var inProgress = Self.full
        inProgress.outcome = nil
        let snapshot = try #require(RunSnapshot(inProgress))
        var kept = inProgress
        kept.checkpoint = nil
        #expect(try Self.roundTrip(snapshot) == snapshot)
        let read = try #require(try Self.roundTrip(snapshot).run)
        #expect(read == kept)
        #expect(Self.unset(in: read) == Self.notInSnapshot, "the complement of what the snapshot keeps")

        let directory = StateStoreTests.folder()
        let file = ActiveRunsFile(directory: directory) { _ in }
        file.save([inProgress.id: snapshot])
        file.flush()
        #expect(ActiveRunsFile.take(directory: directory).runs.map(\.run) == [kept])

        let command = CommandHandoff(pid: 7, pipes: [.init(fd: 9, stream: .stdout)], cgroup: nil, waitStatus: nil)
        let handoff = UpgradeHandoff(
            previousVersion: "taskd 1", listenFD: 3, socketPath: "/run/taskd.sock", socketActivated: false,
            runs: [HandedRun(run: snapshot, command: command, killSignal: 15)], replays: [CutRun(Self.full)])
        let text = try JSONValueEncoder().encode(handoff)
        let handedOver = try JSONValueDecoder().decode(UpgradeHandoff.self, from: text.description)
        #expect(handedOver.runs.map(\.run.run) == [kept])
        #expect(handedOver.replays.map(\.run) == [Self.full])
    }

    /// What the history (the IDL's `RunInfo`, kept in the task record) leaves out of a run by design:
    /// what only a run in progress needs. (Within properties it keeps, it also leaves out the
    /// progress report's instant and the usage's source.)
    static let notInHistory: Set<String> = [
        "payload", "cancelGrace", "inProcess", "blocksSleep", "cancelAt", "killAt", "records", "checkpoint",
        "checkpointRunID", "lostConditions", "progressTimeout", "progressToldAt", "progressUntold",
    ]

    /// A change of each stored property of `full`.
    static let changes: [(String, @Sendable (inout Run) -> Void)] = [
        ("id", { $0.id = "run-2" }), ("key", { $0.key = TaskKey(kind: "processing", identifier: "other") }),
        ("trigger", { $0.trigger = .retry }), ("attempt", { $0.attempt = 4 }), ("wakeID", { $0.wakeID = nil }),
        ("previousAttemptID", { $0.previousAttemptID = nil }), ("payload", { $0.payload = nil }),
        ("queued", { $0.queued = start.advanced(by: 1) }), ("scheduledRealtime", { $0.scheduledRealtime += 1 }),
        ("started", { $0.started = start.advanced(by: 2_001) }), ("budget", { $0.budget = .seconds(61) }),
        ("cancelGrace", { $0.cancelGrace = .seconds(6) }), ("inProcess", { $0.inProcess = false }),
        ("blocksSleep", { $0.blocksSleep = false }), ("cancelAt", { $0.cancelAt += 1 }),
        ("killAt", { $0.killAt += 1 }), ("phase", { $0.phase = .killed(.budget) }),
        ("outcome", { $0.outcome = .killed }), ("termination", { $0.termination = .exited(3) }),
        ("ended", { $0.ended = start.advanced(by: 9_001) }), ("fenced", { $0.fenced = false }),
        ("records", { $0.records = [] }), ("result", { $0.result = #"{"n":3}"# }),
        ("checkpoint", { $0.checkpoint = "page 4" }), ("checkpointRunID", { $0.checkpointRunID = nil }),
        ("waitingFor", { $0.waitingFor = [.batteryNotLow] }), ("group", { $0.group = "downloads" }),
        ("waitingForGroup", { $0.waitingForGroup = false }), ("after", { $0.after = ["run-y"] }),
        ("lostConditions", { $0.lostConditions = [] }), ("partial", { $0.partial = false }),
        ("usage", { $0.usage?.cpuUSec = 5 }), ("progress", { $0.progress?.completed = 4 }),
        ("progressTimeout", { $0.progressTimeout += 1 }), ("progressToldAt", { $0.progressToldAt = nil }),
        ("progressUntold", { $0.progressUntold = false }), ("fleetHost", { $0.fleetHost = nil }),
        ("fenceToken", { $0.fenceToken = 43 }),
    ]

    /// The run's history entry as the task record keeps it: appended, written, read back.
    static func history(_ run: Run) -> RunInfo? {
        var record = TaskRecord()
        record.append(RunInfo(run), keep: 3)
        return TaskRecord(decoding: record.encoded(run.key))?.history.first
    }

    @Test("the history and the task record keep exactly the properties not listed in notInHistory")
    func historyAndTaskRecord() throws {
        let entry = RunInfo(Self.full)
        #expect(RunInfo(json: try JSONParser.parse(String(decoding: entry.encodedJSON, as: UTF8.self))) == entry)
        #expect(Self.history(Self.full) == entry)

        let names = Mirror(reflecting: Self.full).children.map(\.label!)
        #expect(Set(Self.changes.map(\.0)) == Set(names), "a change for each stored property, and only those")
        #expect(Self.notInHistory.isSubset(of: Set(names)))
        // `waitingFor` text shows `after`, else the group's turn, else the conditions: a change of
        // each shows on a run that waits for nothing before it.
        var noAfter = Self.full
        noAfter.after = []
        var noGroupTurn = noAfter
        noGroupTurn.waitingForGroup = false
        for (name, change) in Self.changes {
            let shows = [Self.full, noAfter, noGroupTurn].contains { base in
                var changed = base
                change(&changed)
                return Self.history(changed) != Self.history(base)
            }
            #expect(shows == !Self.notInHistory.contains(name), "\(name): in the history \(shows)")
        }
    }

    @Test("each termination and condition survives the document")
    func terminationsAndConditions() throws {
        let ends: [Termination] = [
            .exited(2), .signaled(9), .returned, .threw("e"), .threwNoRetry("n"), .outOfMemory, .spawnFailed("s"),
            .lost("l"),
        ]
        for end in ends {
            var run = Self.full
            run.termination = end
            #expect(try Self.roundTrip(run) == run)
        }
    }
}
