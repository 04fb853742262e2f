import Synchronization
import TaskdSystem

/// Records every entry it is handed, in order.
final class EntryRecorder: LogBackend {
    let entries = Mutex<[LogEntry]>([])

    func send(_ entry: LogEntry) { entries.withLock { $0.append(entry) } }

    /// The entries of one run (`TASK_RUN_ID`), in order.
    func run(_ id: String) -> [LogEntry] { entries.withLock { $0.filter { $0["TASK_RUN_ID"] == id } } }
}
