@preconcurrency import Dispatch
import TaskdSystem

/// Hands entries to another backend on a serial Dispatch queue, so that a slow journald never
/// blocks the scheduler or the cooperative thread pool. Order is kept.
struct QueuedLogBackend: LogBackend {
    let base: any LogBackend
    let queue = DispatchQueue(label: "taskd.log")

    func send(_ entry: LogEntry) {
        let base = self.base
        queue.async { base.send(entry) }
    }

    /// Waits until every entry sent so far has been handed on.
    func flush() { queue.sync {} }
}
