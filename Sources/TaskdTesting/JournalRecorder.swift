import Synchronization
import TaskdDaemon
import TaskdSystem

/// The journal as a test sees it: every entry the daemon sends, in order, with the clock's
/// CLOCK_REALTIME reading when it was sent.
final class JournalRecorder: LogBackend {
    private let entries = Mutex<[(realtime: UInt64, fields: [String: String])]>([])
    private let clock: ManualClock

    init(clock: ManualClock) { self.clock = clock }

    func send(_ entry: LogEntry) {
        let fields = Dictionary(entry.fields.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        let realtime = clock.now().realtime
        entries.withLock { $0.append((realtime, fields)) }
    }

    /// Every entry so far, each with when it was sent.
    var all: [(realtime: UInt64, fields: [String: String])] { entries.withLock { $0 } }
}
