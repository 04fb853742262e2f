import Synchronization
import TaskdSystem

/// Records the messages of each batch it is handed.
final class BatchRecorder: LogBackend {
    let batches = Mutex<[[String]]>([])

    func send(_ entry: LogEntry) { send(batch: [entry]) }

    func send(batch entries: ArraySlice<LogEntry>) {
        batches.withLock { $0.append(entries.map(\.message)) }
    }
}
