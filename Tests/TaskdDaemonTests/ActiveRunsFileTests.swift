import Synchronization
import TaskScheduling
import TaskdIO
import Testing

@testable import TaskdDaemon

/// The runs in progress on disk, for a start after a crash: the latest list, read back once.
struct ActiveRunsFileTests {
    static func snapshot(_ id: String) -> RunSnapshot {
        var run = Run(
            id: id, key: TaskKey(kind: "processing", identifier: "backup"), trigger: .timer, attempt: 1,
            queued: ClockReading(monotonic: 1_000, realtime: 2_000), budget: .seconds(60), cancelGrace: .seconds(5),
            inProcess: false)
        run.started = ClockReading(monotonic: 1_500, realtime: 2_500)
        run.phase = .running
        return RunSnapshot(run)!
    }

    @Test("the latest list is what the next start reads, once; an empty list leaves no file")
    func latestListOnce() {
        let directory = StateStoreTests.folder()
        let problems = Mutex<[String]>([])
        let file = ActiveRunsFile(directory: directory) { p in problems.withLock { $0.append(p) } }
        file.save(["a": Self.snapshot("a")])
        file.save(["a": Self.snapshot("a"), "b": Self.snapshot("b")])
        file.flush()
        let (runs, problem) = ActiveRunsFile.take(directory: directory)
        #expect(runs.map(\.id) == ["a", "b"] && problem == nil)
        #expect(runs.first?.run?.started == ClockReading(monotonic: 1_500, realtime: 2_500))
        #expect(ActiveRunsFile.take(directory: directory).runs.isEmpty, "read once")
        file.save(["c": Self.snapshot("c")])
        file.save([:])
        file.flush()
        #expect(FileIO.read(directory + "/active-runs.json").isFailure, "no run in progress: no file")
        #expect(problems.withLock { $0 }.isEmpty)
    }

    @Test("a file that cannot be read is reported, naming it")
    func unreadable() {
        let directory = StateStoreTests.folder()
        _ = FileIO.replace(directory + "/active-runs.json", with: Array("[{".utf8))
        let (runs, problem) = ActiveRunsFile.take(directory: directory)
        #expect(runs.isEmpty && problem?.hasPrefix(directory + "/active-runs.json: ") == true)
    }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
