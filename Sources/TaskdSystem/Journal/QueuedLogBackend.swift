@preconcurrency import Dispatch
import Synchronization
import TaskdIO

/// Hands entries to another backend on a serial Dispatch queue, so that a slow journald never
/// blocks the scheduler or the cooperative thread pool. Order is kept. Entries wait in one batch;
/// the queue's thread is woken when a batch starts, and, for entries from the event loop, only at
/// the end of the loop's turn, so a handler the turn started gets the CPU first; while entries keep
/// coming, at most once per `pace`, so that under load it hands on larger batches rather than
/// waking at every turn of the loop. Handler output
/// (`sheddable` entries) is shed once `outputBacklog` entries wait, and the count is journaled
/// when the backlog has halved; taskd's own events are never shed. An entry sent `lazy` is
/// formatted on the queue's thread, off the event loop. `whenHandedOn` is a barrier: someone waits
/// on it (a watcher of a run's end), so it is drained at once, without the pace.
public final class QueuedLogBackend: LogBackend {
    static let outputBacklog = 16_384

    let base: any LogBackend
    /// The entry that tells how many lines of output were shed.
    private let shedNotice: @Sendable (Int) -> LogEntry
    private let queue = DispatchQueue(label: "taskd.log")
    private let batch = Mutex<[Item]>([])
    private let pending = Atomic<Int>(0)
    private let shed = Atomic<Int>(0)
    /// When the last drain started (CLOCK_MONOTONIC µs).
    private let drainedAt = Atomic<UInt64>(0)

    /// The least time between two wake-ups of the queue's thread while entries keep coming (µs).
    public static let pace: UInt64 = 10_000
    let pace: UInt64

    /// An entry, what makes it, or a barrier to call once the entries before it are handed on.
    private enum Item {
        case entry(LogEntry)
        case lazy(@Sendable () -> LogEntry)
        case barrier(@Sendable () -> Void)
    }

    /// Queues entries for `base`; `shedNotice` makes the entry that tells of shed output.
    public init(
        base: any LogBackend, pace: UInt64 = QueuedLogBackend.pace,
        shedNotice: @escaping @Sendable (Int) -> LogEntry = QueuedLogBackend.shedNotice
    ) {
        self.base = base
        self.pace = pace
        self.shedNotice = shedNotice
    }

    public func send(_ entry: LogEntry) {
        if entry.sheddable && pending.load(ordering: .relaxed) >= Self.outputBacklog {
            shed.add(1, ordering: .relaxed)
            return
        }
        enqueue(.entry(entry))
    }

    public func send(lazy make: @escaping @Sendable () -> LogEntry) { enqueue(.lazy(make)) }

    public func encoded(_ entries: [LogEntry]) -> (records: [[UInt8]], text: Bool)? { base.encoded(entries) }

    public func keeps(priority: Int) -> Bool { base.keeps(priority: priority) }

    /// Calls `body` on the queue's thread once every entry sent before has been handed on; the
    /// queue drains at once rather than at its pace. Safe from any thread.
    public func whenHandedOn(_ body: @escaping @Sendable () -> Void) {
        batch.withLock { $0.append(.barrier(body)) }
        queue.async { self.drain() }
    }

    private func enqueue(_ item: Item) {
        pending.add(1, ordering: .relaxed)
        let first = batch.withLock { items in
            items.append(item)
            return items.count == 1
        }
        guard first else { return }
        EventLoop.shared.afterTurn { [self] in
            let now = DeadlineTimer.now()
            let due = drainedAt.load(ordering: .relaxed) &+ pace
            guard now < due else { return queue.async { self.drain() } }
            queue.asyncAfter(deadline: .now() + .microseconds(Int(due - now))) { self.drain() }
        }
    }

    /// How many entries are handed on at once (one write to standard error, one check for journald).
    static let slice = 64

    /// Hands on every entry waiting (on `queue`), `slice` at a time; a barrier's entries before it first.
    private func drain() {
        drainedAt.store(DeadlineTimer.now(), ordering: .relaxed)
        let items = batch.withLock { items in
            var taken: [Item] = []
            swap(&items, &taken)
            return taken
        }
        var slice: [LogEntry] = []
        slice.reserveCapacity(min(items.count, Self.slice))
        for item in items {
            switch item {
            case .entry(let entry): slice.append(entry)
            case .lazy(let make): slice.append(make())
            case .barrier(let body):
                handOn(&slice)
                body()
                continue
            }
            if slice.count == Self.slice { handOn(&slice) }
        }
        handOn(&slice)
    }

    /// Sends `slice` to the base backend and empties it; journals what was shed once the backlog halved.
    private func handOn(_ slice: inout [LogEntry]) {
        guard !slice.isEmpty else { return }
        base.send(batch: slice[...])
        let left = pending.subtract(slice.count, ordering: .relaxed).newValue
        slice.removeAll(keepingCapacity: true)
        if left < Self.outputBacklog / 2 {
            let count = shed.exchange(0, ordering: .relaxed)
            if count > 0 { base.send(shedNotice(count)) }
        }
    }

    /// Waits until every entry sent so far has been handed on.
    public func flush() { queue.sync { drain() } }

    /// The entry that tells `count` lines of output were shed (priority warning, `TASKD_OUTPUT_SHED`).
    public static func shedNotice(_ count: Int) -> LogEntry {
        LogEntry([
            (
                "MESSAGE",
                "dropped \(count) line(s) of handler output: the journal did not keep up with "
                    + "\(outputBacklog) waiting entries"
            ),
            ("PRIORITY", "4"), ("TASKD_OUTPUT_SHED", String(count)),
        ])
    }
}
