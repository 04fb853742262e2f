import TaskScheduling
import TaskdIO
import Testing

@testable import Taskd

#if canImport(Glibc)
    import Glibc
#endif

/// The state folder: what an acknowledgement waits for, and what a barrier puts on disk.
struct StateStoreTests {
    static let key = TaskKey(kind: "appRefresh", identifier: "refresh")

    static func folder() -> String {
        var template = Array("/tmp/taskd-state-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    static func wake(_ id: String) -> WakeRecord {
        WakeRecord(id: id, key: key, wakeID: nil, payload: "{\"n\":1}", acknowledgedUSec: 1)
    }

    static func open(_ directory: String) async -> (StateStore, [WakeRecord]) {
        let store = StateStore(directory: directory) { _, problem in Issue.record("\(problem)") }
        _ = await store.loadTasks([key])
        let (wakes, problems) = await store.loadWakes()
        #expect(problems.isEmpty)
        return (store, wakes)
    }

    @Test("a barrier puts the lazy part on disk: the snapshot, then the settle lines; a restart replays the rest")
    func barrierWritesEverything() async {
        let directory = Self.folder()
        let (store, none) = await Self.open(directory)
        #expect(none.isEmpty)
        await store.waitDurable(store.add([Self.wake("a"), Self.wake("b")]))
        var record = TaskRecord()
        record.lastTriggerUSec = 42
        store.save(Self.key, record, sync: false)
        store.settle(["a"])
        // A wake added with the barrier: that flush would otherwise leave the lazy part for later.
        _ = store.add([Self.wake("c")])
        await store.waitDurable(store.add([]))

        guard case .success(let bytes) = FileIO.read(store.taskPath(Self.key)) else {
            Issue.record("no task file")
            return
        }
        #expect(TaskRecord(decoding: bytes)?.lastTriggerUSec == 42)
        guard case .success(let log) = FileIO.read(store.logPath) else {
            Issue.record("no wake log")
            return
        }
        let lines = log.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        #expect(lines.count == 4)
        #expect(lines.contains("{\"settle\":\"a\"}"))

        let (_, replayed) = await Self.open(directory)
        #expect(replayed == [Self.wake("b"), Self.wake("c")])
    }

    @Test("with no wake waiting, a snapshot and a settle are written without a barrier", .timeLimit(.minutes(1)))
    func lazyPartAloneIsWritten() async throws {
        let directory = Self.folder()
        let (store, _) = await Self.open(directory)
        await store.waitDurable(store.add([Self.wake("a")]))
        store.settle(["a"])
        store.save(Self.key, TaskRecord(), sync: false)
        // No barrier: poll the folder (bounded by the time limit) until the lazy flush has run.
        while true {
            if case .success(let log) = FileIO.read(store.logPath),
                String(decoding: log, as: UTF8.self).hasSuffix("{\"settle\":\"a\"}\n"),
                case .success = FileIO.read(store.taskPath(Self.key))
            {
                break
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let (_, replayed) = await Self.open(directory)
        #expect(replayed.isEmpty)
    }

    @Test("wakes are replayed in the order they were acknowledged, also after the log was compacted")
    func replayKeepsTheOrderAcrossCompactions() async {
        let directory = Self.folder()
        let (store, _) = await Self.open(directory)
        let ids = (0..<64).map { "order\($0)" }
        await store.waitDurable(store.add(ids.map(Self.wake)))
        let (_, first) = await Self.open(directory)  // compacts the log at start
        let (_, second) = await Self.open(directory)
        #expect(first.map(\.id) == ids)
        #expect(second.map(\.id) == ids)
    }
}
