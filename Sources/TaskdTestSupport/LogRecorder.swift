import Synchronization
import TaskdDaemon
import TaskdSystem

/// The journal as a test sees it, the one in-memory `LogBackend` of the tests and the kit: every
/// entry it is handed, in order and in the batches it was handed them, each with the CLOCK_REALTIME
/// reading of the test's clock when it came.
package final class LogRecorder: LogBackend {
    /// An entry, and the clock's CLOCK_REALTIME µs when it was sent.
    package struct Recorded: Sendable {
        package let realtime: UInt64
        package let entry: LogEntry
        /// Its fields, the last value of a repeated one.
        package var fields: [String: String] {
            Dictionary(entry.fields.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        }
    }

    private let batchesSent = Mutex<[[Recorded]]>([])
    private let realtime: @Sendable () -> UInt64

    /// A recorder that stamps each entry with `clock`'s realtime reading (none: 0).
    package init(clock: (any DaemonClock)? = nil) {
        realtime = { clock?.now().realtime ?? 0 }
    }

    package func send(_ entry: LogEntry) { send(batch: [entry]) }

    package func send(batch entries: ArraySlice<LogEntry>) {
        let now = realtime()
        let batch = entries.map { Recorded(realtime: now, entry: $0) }
        batchesSent.withLock { $0.append(batch) }
    }

    /// Every entry so far, each with when it was sent.
    package var all: [Recorded] { batchesSent.withLock { $0.flatMap { $0 } } }

    /// Every entry so far, in order.
    package var entries: [LogEntry] { all.map(\.entry) }

    /// The messages of each batch it was handed, in order (one entry sent alone is a batch of one).
    package var batches: [[String]] { batchesSent.withLock { $0.map { $0.map(\.entry.message) } } }

    /// The entries of one run (`TASK_RUN_ID`), in order.
    package func run(_ id: String) -> [LogEntry] { entries.filter { $0["TASK_RUN_ID"] == id } }
}
