@preconcurrency import Dispatch
import Synchronization
import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// The state folder. Per task, `tasks/KIND:IDENTIFIER.json` (a `TaskRecord`), replaced atomically:
/// temporary file, fsync, rename, fsync of the folder. And `wakes.log`, the acknowledged wakes not
/// yet answered: one JSON line per record added or settled, written in batches, compacted when
/// mostly settled. An added wake is written before its reply (it survives a crash of taskd), and
/// fdatasynced within `syncInterval` (`SyncIntervalSec=`, 1 s by default), or before its reply when
/// that is 0 (group commit: it survives a crash of the machine too). The log's file is kept
/// zero-filled ahead of its records (`logChunk`), so that a batch overwrites blocks that exist
/// already and its fdatasync writes data alone, with no commit of the file system's journal;
/// reading stops at the first NUL byte. Task snapshots and settle lines are the lazy part: while
/// wakes keep coming, they are written at most every `lazyInterval` (one history file rewrite, not
/// one per batch), and settle lines are synced with the next sync of the log: a machine crash may
/// replay an answered wake (delivery is at least once). All file work happens on one serial queue,
/// never on the cooperative pool. A failure is reported through `report` once per spell (priority
/// 3, "error"), its end once (priority 5, "writable again"), and scheduling goes on in memory.
final class StateStore: RunStore {
    let directory: String
    private let queue = DispatchQueue(label: "taskd.state")
    private let pending = Mutex(Pending())
    private let log = Mutex(LogFile())
    /// Whether the last batch of task snapshots failed (touched on `queue` only).
    private let snapshotsFailing = Mutex(false)
    private let report: @Sendable (_ priority: Int, _ message: String) -> Void
    /// How long lines written to the log may wait for their fdatasync (µs); 0: a wake's reply waits for
    /// it; `.max` (infinity): until a barrier (the stop), else the kernel's own writeback.
    let syncInterval: UInt64
    /// `fdatasync(2)`: true when the file's data is on disk (a seam for tests, which count the calls).
    private let syncFile: @Sendable (Int32) -> Bool

    /// `SyncIntervalSec=`'s default (µs): a power cut may lose the wakes of the last second.
    static let defaultSyncInterval: UInt64 = 1_000_000

    /// How long the lazy part may wait while wakes keep coming (µs).
    static let lazyInterval: UInt64 = 100_000

    /// The log's file grows by zero-filled chunks of this many bytes, written ahead of the records.
    static let logChunk = 256 * 1024

    /// The zeros to write after `count` bytes of records: at least half a chunk, to a chunk's end.
    static func zeros(after count: Int) -> [UInt8] {
        let end = (count + logChunk / 2 + logChunk - 1) / logChunk * logChunk
        return [UInt8](repeating: 0, count: end - count)
    }

    /// Work handed to the queue and not yet written.
    private struct Pending {
        /// Acknowledged wakes, written and synced by the next flush; their lines are encoded by the
        /// writer, off the event loop.
        var added: [WakeRecord] = []
        /// Everything enqueued so far must be on disk after the next flush (`add([])`).
        var barrier = false
        // The lazy part.
        var snapshots: [TaskKey: [UInt8]] = [:]
        /// Snapshots to fsync (someone waits on them); the others are replaced atomically but left
        /// to the kernel, which keeps them across a crash of taskd, not of the machine.
        var synced: Set<TaskKey> = []
        var afterSnapshots: [@Sendable () -> Void] = []
        var settled: [UInt8] = []
        var settledIDs: [String] = []
        var sequence: UInt64 = 0
        var durable: UInt64 = 0
        var waiters: [(UInt64, @Sendable () -> Void)] = []
        var scheduled = false
        /// A flush is scheduled for when the lazy part is due.
        var lazyScheduled = false
        /// When the lazy part was last written (CLOCK_MONOTONIC µs).
        var lazyWrittenAt: UInt64 = 0

        var hasLazy: Bool { !snapshots.isEmpty || !settled.isEmpty }

        /// Whether a flush at `now` writes the lazy part: someone waits on it, no wake does, or it is due.
        func writesLazy(at now: UInt64) -> Bool {
            barrier || !synced.isEmpty || !afterSnapshots.isEmpty || added.isEmpty
                || now >= lazyWrittenAt &+ StateStore.lazyInterval
        }
    }

    /// The open log and the records it holds that are not settled (for compaction).
    private struct LogFile {
        var fd: Int32 = -1
        /// Where the records end and the zeros begin.
        var size = 0
        /// The file's length: records, then zeros.
        var capacity = 0
        /// Each record's line, and its rank in the order records were added (kept by compaction).
        var live: [String: (rank: UInt64, line: [UInt8])] = [:]
        var added: UInt64 = 0
        /// The bytes of the live records, kept as they change (the compaction threshold).
        var liveBytes = 0
        var failing = false
        /// Lines were written since the last fdatasync.
        var unsynced = false
        /// A sync of the log is due `syncInterval` after the first unsynced write.
        var syncScheduled = false

        mutating func set(_ id: String, _ line: [UInt8]?) {
            let old = live[id]
            liveBytes += (line?.count ?? 0) - (old?.line.count ?? 0)
            guard let line else { return live[id] = nil }
            added += 1
            live[id] = (old?.rank ?? added, line)
        }
    }

    init(
        directory: String, syncInterval: UInt64 = StateStore.defaultSyncInterval,
        syncFile: @escaping @Sendable (Int32) -> Bool = { fdatasync($0) == 0 },
        report: @escaping @Sendable (_ priority: Int, _ message: String) -> Void
    ) {
        self.directory = directory
        self.syncInterval = syncInterval
        self.syncFile = syncFile
        self.report = report
    }

    private func onError(_ message: String) { report(3, message) }

    /// Creates `path` if missing; the reason it could not, if so.
    private func makeDirectory(_ path: String) -> String? {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return nil }
        return "\(path): cannot create (\(String(cString: strerror(errno))))"
    }

    var tasksDirectory: String { directory + "/tasks" }
    var logPath: String { directory + "/wakes.log" }

    func taskPath(_ key: TaskKey) -> String { tasksDirectory + "/" + key.description + ".json" }

    // MARK: Start-up

    /// Reads the records of `keys`. A file that cannot be used is reported and moved aside
    /// (`NAME.damaged-USEC`); nothing is lost silently.
    func loadTasks(_ keys: [TaskKey]) async -> (tasks: [TaskKey: TaskRecord], problems: [String]) {
        await withCheckedContinuation { continuation in
            queue.async {
                var problems: [String] = []
                if let problem = self.makeDirectory(self.directory) ?? self.makeDirectory(self.tasksDirectory) {
                    self.onError(problem + "; task state is kept in memory only")
                }
                var tasks: [TaskKey: TaskRecord] = [:]
                for key in keys {
                    let path = self.taskPath(key)
                    switch FileIO.read(path) {
                    case .failure(let error) where error.errno == ENOENT: continue
                    case .failure(let error):
                        problems.append("\(path): cannot read (\(error)); \(self.moveAside(path))")
                    case .success(let bytes):
                        if let record = TaskRecord(decoding: bytes) {
                            tasks[key] = record
                        } else {
                            problems.append("\(path): not a task record; \(self.moveAside(path))")
                        }
                    }
                }
                continuation.resume(returning: (tasks, problems))
            }
        }
    }

    /// The acknowledged wakes not yet answered, oldest first; the log is compacted to them.
    func loadWakes() async -> (wakes: [WakeRecord], problems: [String]) {
        await withCheckedContinuation { continuation in
            queue.async {
                var problems: [String] = []
                _ = self.makeDirectory(self.directory)  // reported by loadTasks
                let wakes = self.openLog(&problems)
                continuation.resume(returning: (wakes, problems))
            }
        }
    }

    private func moveAside(_ path: String) -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let aside = path + ".damaged-\(Int(now.tv_sec) * 1_000_000 + now.tv_nsec / 1000)"
        return rename(path, aside) == 0
            ? "moved aside to \(aside)" : "could not move it aside (\(String(cString: strerror(errno))))"
    }

    /// Replays the log into its live records and rewrites it with only those.
    private func openLog(_ problems: inout [String]) -> [WakeRecord] {
        var live: [String: WakeRecord] = [:]
        var order: [String] = []
        switch FileIO.read(logPath) {
        case .failure(let error) where error.errno == ENOENT: break
        case .failure(let error):
            problems.append("\(logPath): cannot read (\(error)); \(moveAside(logPath))")
        case .success(let file):
            // The records end at the first NUL: the zeros written ahead of them, or a batch a crash
            // cut short (never acknowledged).
            let bytes = file.prefix { $0 != 0 }
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            for (number, raw) in lines.enumerated() {
                if raw.isEmpty { continue }
                let isTail = number == lines.count - 1
                guard let parsed = WakeRecord.parse(Substring(decoding: raw, as: UTF8.self)) else {
                    // A torn last line was never acknowledged (the ack waits for its fdatasync).
                    if !isTail { problems.append("\(logPath):\(number + 1): not a wake record; skipped") }
                    continue
                }
                if let record = parsed.added {
                    if live[record.id] == nil { order.append(record.id) }
                    live[record.id] = record
                }
                if let id = parsed.settled { live[id] = nil }
            }
        }
        let wakes = order.compactMap { live[$0] }
        log.withLock { file in
            file.live = [:]
            file.liveBytes = 0
            for wake in wakes { file.set(wake.id, wake.line) }
        }
        if let problem = compact() { onError(problem) }
        return wakes
    }

    /// Rewrites the log with its live records only (atomically) and reopens it for appending.
    private func compact() -> String? {
        log.withLock { file -> String? in
            let bytes = file.live.values.sorted { $0.rank < $1.rank }.flatMap(\.line)
            let padded = bytes + Self.zeros(after: bytes.count)
            if let error = FileIO.replace(logPath, with: padded) {
                file.failing = true
                return "\(logPath): cannot write (\(error)); acknowledged wakes are kept in memory only"
            }
            FileIO.syncDirectory(directory)
            if file.fd >= 0 { close(file.fd) }
            file.fd = open(logPath, O_WRONLY | O_CLOEXEC)
            file.size = bytes.count
            file.capacity = padded.count
            file.unsynced = false
            return file.fd < 0 ? "\(logPath): cannot open (\(String(cString: strerror(errno))))" : nil
        }
    }

    // MARK: Writes

    /// Records acknowledged wakes; returns a ticket for `waitDurable`. Call before starting their runs,
    /// so that a run that ends at once settles a record that is already in the log. `add([])` is a
    /// barrier: once its ticket is durable, everything enqueued before it is on disk (synced).
    func add(_ records: [WakeRecord]) -> UInt64 {
        enqueue { p in
            if records.isEmpty { p.barrier = true }
            p.added += records
        }
    }

    /// The runs answering these records ended for good.
    func settle(_ ids: [String]) {
        _ = enqueue { p in
            for id in ids {
                p.settled += WakeRecord.settleLine(id)
                p.settledIDs.append(id)
            }
        }
    }

    /// Keeps the latest state of a task; `then` runs once it is on disk (or failed to get there).
    /// Snapshots of one task queued together are written once, the latest. A `sync` snapshot is
    /// fsynced with its folder before `then`; others are atomic renames left to the page cache.
    func save(_ key: TaskKey, _ record: TaskRecord, sync: Bool = true, then: (@Sendable () -> Void)? = nil) {
        let bytes = record.encoded(key)
        _ = enqueue { p in
            p.snapshots[key] = bytes
            if sync { p.synced.insert(key) }
            if let then { p.afterSnapshots.append(then) }
        }
    }

    /// Runs `body` once the wakes added up to `ticket` are durable (see `waitDurable`): at once if they
    /// are, else on the writer's thread right after the flush that wrote them (keep it short).
    func whenDurable(_ ticket: UInt64, _ body: @escaping @Sendable () -> Void) {
        let done = pending.withLock { p -> Bool in
            if p.durable >= ticket { return true }
            p.waiters.append((ticket, body))
            return false
        }
        if done { body() }
    }

    private func enqueue(_ change: (inout Pending) -> Void) -> UInt64 {
        let (ticket, schedule) = pending.withLock { p -> (UInt64, Bool) in
            change(&p)
            p.sequence += 1
            guard !p.scheduled else { return (p.sequence, false) }
            p.scheduled = true
            return (p.sequence, true)
        }
        // From the event loop, the writer starts at the end of its turn: after the runs it started.
        if schedule { EventLoop.shared.afterTurn { self.queue.async { self.flush() } } }
        return ticket
    }

    /// Writes the added wakes and, when `writesLazy`, the lazy part: task snapshots before settle
    /// lines (a wake is settled on disk only after the history that records its run); syncs the log
    /// if a barrier asked, or a wake was added and `syncInterval` is 0; then wakes the waiters.
    private func flush() {
        let now = DeadlineTimer.now()
        let (batch, lazyDue) = pending.withLock { p -> (Pending, UInt64?) in
            var batch = Pending()
            if p.writesLazy(at: now) {
                swap(&batch.snapshots, &p.snapshots)
                swap(&batch.synced, &p.synced)
                swap(&batch.afterSnapshots, &p.afterSnapshots)
                swap(&batch.settled, &p.settled)
                swap(&batch.settledIDs, &p.settledIDs)
                p.lazyWrittenAt = now
            }
            swap(&batch.added, &p.added)
            swap(&batch.barrier, &p.barrier)
            batch.sequence = p.sequence
            p.scheduled = false
            guard p.hasLazy, !p.lazyScheduled else { return (batch, nil) }
            p.lazyScheduled = true
            return (batch, p.lazyWrittenAt &+ Self.lazyInterval)
        }
        if let lazyDue {
            let delay = lazyDue > now ? lazyDue - now : 0
            queue.asyncAfter(deadline: .now() + .microseconds(Int(delay))) {
                self.pending.withLock { $0.lazyScheduled = false }
                self.flush()
            }
        }
        if !batch.snapshots.isEmpty {
            var failures: [String] = []
            let folderProblem = makeDirectory(tasksDirectory)
            if let folderProblem { failures.append(folderProblem) }
            for (key, bytes) in batch.snapshots where folderProblem == nil {
                if let error = FileIO.replace(taskPath(key), with: bytes, sync: batch.synced.contains(key)) {
                    failures.append("\(taskPath(key)): cannot write (\(error))")
                }
            }
            if !batch.synced.isEmpty { FileIO.syncDirectory(tasksDirectory) }
            let wasFailing = snapshotsFailing.withLock { failing in
                defer { failing = !failures.isEmpty }
                return failing
            }
            if let first = failures.first, !wasFailing {
                let more = failures.count > 1 ? " (and \(failures.count - 1) more)" : ""
                onError(first + more + "; task state is kept in memory, written again at its next change")
            } else if failures.isEmpty && wasFailing {
                report(5, "\(tasksDirectory): writable again")
            }
        }
        batch.afterSnapshots.forEach { $0() }
        if !batch.added.isEmpty || !batch.settled.isEmpty || batch.barrier { appendLines(batch) }
        let ready = pending.withLock { p -> [@Sendable () -> Void] in
            p.durable = batch.sequence
            let ready = p.waiters.filter { $0.0 <= batch.sequence }.map(\.1)
            p.waiters.removeAll { $0.0 <= batch.sequence }
            return ready
        }
        ready.forEach { $0() }
    }

    private func appendLines(_ batch: Pending) {
        let needsCompaction = log.withLock { file -> Bool in
            var lines: [UInt8] = []
            for record in batch.added {
                let line = record.line
                lines += line
                file.set(record.id, line)
            }
            for id in batch.settledIDs { file.set(id, nil) }
            lines += batch.settled
            let sync = batch.barrier || (!batch.added.isEmpty && syncInterval == 0)
            guard !lines.isEmpty || (sync && file.unsynced) else { return false }
            let end = file.size + lines.count
            // Past the zeros, the next chunk of them goes with the lines (one commit per chunk).
            let zeros = end <= file.capacity ? [] : Self.zeros(after: end)
            var written = file.fd >= 0 && FileIO.writeAll(file.fd, lines + zeros, at: file.size)
            if written && sync { written = syncFile(file.fd) }
            if written {
                file.unsynced = !sync
                file.size = end
                file.capacity = max(file.capacity, end + zeros.count)
                if file.failing { report(5, "\(logPath): writable again") }
                file.failing = false
            } else if !file.failing {
                file.failing = true
                onError(
                    "\(logPath): cannot write (\(String(cString: strerror(errno)))); acknowledged wakes are kept in memory only"
                )
            }
            if file.unsynced && syncInterval > 0 && syncInterval != .max && !file.syncScheduled {
                file.syncScheduled = true
                queue.asyncAfter(deadline: .now() + .microseconds(Int(min(syncInterval, 1 << 50)))) {
                    self.syncLog()
                }
            }
            return file.failing || (file.size > 1 << 20 && file.size > 4 * file.liveBytes)
        }
        if needsCompaction, let problem = compact() {
            if !log.withLock({ $0.failing }) { onError(problem) }
        }
    }

    /// The background sync: puts what the log's writes left in the page cache on disk.
    private func syncLog() {
        log.withLock { file in
            file.syncScheduled = false
            guard file.unsynced, file.fd >= 0, !file.failing else { return }
            if syncFile(file.fd) {
                file.unsynced = false
            } else {
                file.failing = true
                onError(
                    "\(logPath): cannot sync (\(String(cString: strerror(errno)))); a power cut may lose the wakes acknowledged since the last sync"
                )
            }
        }
    }
}
