import Synchronization
import TaskScheduling
import TaskdIO
import Testing

@testable import TaskdDaemon

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

    /// The log's bytes before the zeros written ahead of its records.
    static func records(_ store: StateStore) -> [UInt8]? {
        guard case .success(let bytes) = FileIO.read(store.logPath) else { return nil }
        return Array(bytes.prefix { $0 != 0 })
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
        guard let log = Self.records(store) else {
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
            if let log = Self.records(store),
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

    @Test("while wakes keep coming, a history file is rewritten at most once per lazyInterval, not at each flush")
    func lazyPartWaitsWhileWakesCome() async {
        let directory = Self.folder()
        let (store, _) = await Self.open(directory)
        let start = DeadlineTimer.now()
        var seen: Set<UInt64> = []
        for i in 1...200 {
            // On the loop, as the daemon does: the save and the wake go to the writer in one flush,
            // at the end of the turn (a flush with no wake writes the lazy part at once).
            let ticket = await Task(executorPreference: EventLoop.shared) {
                var record = TaskRecord()
                record.lastTriggerUSec = UInt64(i)
                store.save(Self.key, record, sync: false)
                return store.add([Self.wake("w\(i)")])
            }.value
            // A flush writes due snapshots before it wakes the waiters: what it wrote is on disk now.
            await store.waitDurable(ticket)
            if case .success(let bytes) = FileIO.read(store.taskPath(Self.key)),
                let value = TaskRecord(decoding: bytes)?.lastTriggerUSec
            {
                seen.insert(value)
            }
        }
        let elapsed = DeadlineTimer.now() - start
        // Written at the first flush, then once per interval at most (200 versions if at every flush).
        #expect(!seen.isEmpty)
        #expect(UInt64(seen.count) <= elapsed / StateStore.lazyInterval + 2)
        await store.waitDurable(store.add([]))
        guard case .success(let bytes) = FileIO.read(store.taskPath(Self.key)) else {
            Issue.record("no task file")
            return
        }
        #expect(TaskRecord(decoding: bytes)?.lastTriggerUSec == 200)  // a barrier writes the latest
    }

    @Test("the log is zero-filled a chunk ahead of its records and grows by chunks; a restart replays them all")
    func logGrowsByZeroFilledChunks() async {
        let directory = Self.folder()
        let (store, _) = await Self.open(directory)
        let ids = (0..<4000).map { "w\($0)" }
        for batch in stride(from: 0, to: ids.count, by: 500) {
            await store.waitDurable(store.add(ids[batch..<batch + 500].map(Self.wake)))
        }
        guard case .success(let file) = FileIO.read(store.logPath), let records = Self.records(store) else {
            Issue.record("no wake log")
            return
        }
        #expect(records.count > StateStore.logChunk)  // it grew past its first chunk
        #expect(file.count % StateStore.logChunk == 0)
        #expect(file.count - records.count >= StateStore.logChunk / 2)
        #expect(file[records.count...].allSatisfy { $0 == 0 })
        let (_, replayed) = await Self.open(directory)
        #expect(replayed.map(\.id) == ids)
    }

    @Test("what a crash left after the zeros (a batch never acknowledged) is ignored and compacted away")
    func bytesAfterTheZerosAreIgnored() async {
        let directory = Self.folder()
        let kept = Self.wake("kept").line
        let cut = Array(#"{"add":"lost","kind":"appRefresh","task":"refresh","atUSec":1}"#.utf8) + [10]
        let file = kept + [UInt8](repeating: 0, count: 4096) + cut + [UInt8](repeating: 0, count: 100)
        mkdir(directory, 0o755)
        #expect(FileIO.replace(directory + "/wakes.log", with: file) == nil)
        let (store, replayed) = await Self.open(directory)
        #expect(replayed.map(\.id) == ["kept"])
        #expect(Self.records(store) == kept)
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

    /// Counts the store's fdatasyncs and tells a waiting test of each (the real call is made too).
    final class SyncCounter: Sendable {
        let count = Mutex(0)
        let (syncs, continuation) = AsyncStream.makeStream(of: Int.self)

        func sync(_ fd: Int32) -> Bool {
            let ok = fdatasync(fd) == 0
            continuation.yield(
                count.withLock { n in
                    n += 1
                    return n
                })
            return ok
        }
    }

    static func open(_ directory: String, syncInterval: UInt64, counter: SyncCounter) async -> StateStore {
        let store = StateStore(directory: directory, syncInterval: syncInterval, syncFile: counter.sync) { _, problem in
            Issue.record("\(problem)")
        }
        _ = await store.loadTasks([key])
        _ = await store.loadWakes()
        return store
    }

    @Test("SyncIntervalSec=0: a wake is durable only once the log was fdatasynced")
    func zeroIntervalSyncsBeforeTheAcknowledgement() async {
        let counter = SyncCounter()
        let store = await Self.open(Self.folder(), syncInterval: 0, counter: counter)
        await store.waitDurable(store.add([Self.wake("a")]))
        #expect(counter.count.withLock { $0 } == 1)
        await store.waitDurable(store.add([Self.wake("b"), Self.wake("c")]))
        #expect(counter.count.withLock { $0 } == 2)
    }

    @Test("by default a wake is durable once written, before the log's fdatasync")
    func writtenWakesAreDurableBeforeTheSync() async {
        let counter = SyncCounter()
        // An interval no run of the tests reaches, however loaded the machine: no sync can come.
        let store = await Self.open(Self.folder(), syncInterval: 3_600_000_000, counter: counter)
        await store.waitDurable(store.add([Self.wake("a")]))
        await store.waitDurable(store.add([Self.wake("b")]))
        #expect(counter.count.withLock { $0 } == 0)
        #expect(Self.records(store) == Self.wake("a").line + Self.wake("b").line)
    }

    @Test(
        "the written log is fdatasynced in the background within the interval; then a barrier needs none",
        .timeLimit(.minutes(1)))
    func writtenWakesAreSyncedInTheBackground() async {
        let counter = SyncCounter()
        let store = await Self.open(Self.folder(), syncInterval: StateStore.defaultSyncInterval, counter: counter)
        await store.waitDurable(store.add([Self.wake("a")]))
        // The background sync comes (bounded by the time limit), after the write it covers.
        var syncs = counter.syncs.makeAsyncIterator()
        #expect(await syncs.next() == 1)
        // Nothing unsynced is left: a barrier writes nothing and needs no sync.
        await store.waitDurable(store.add([]))
        #expect(counter.count.withLock { $0 } == 1)
    }

    @Test("SyncIntervalSec=infinity: only a barrier (the stop) syncs the log")
    func infiniteIntervalSyncsAtTheBarrier() async {
        let counter = SyncCounter()
        let store = await Self.open(Self.folder(), syncInterval: .max, counter: counter)
        await store.waitDurable(store.add([Self.wake("a")]))
        #expect(counter.count.withLock { $0 } == 0)
        await store.waitDurable(store.add([]))
        #expect(counter.count.withLock { $0 } == 1)
    }
}
