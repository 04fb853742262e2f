import Synchronization
import TaskScheduling
import TaskdDaemon

/// A `RunStore` in memory, durable at once: for the daemon's tests and `TaskdTesting`. What a test reads back
/// is what taskd would have written.
package final class MemoryStore: RunStore {
    private struct State {
        var records: [TaskKey: TaskRecord] = [:]
        var wakes: [String: WakeRecord] = [:]
        var ticket: UInt64 = 0
    }

    private let state = Mutex(State())

    package init() {}

    package func loadTasks(_ keys: [TaskKey]) async -> (tasks: [TaskKey: TaskRecord], problems: [String]) {
        let records = state.withLock { $0.records }
        return (records.filter { keys.contains($0.key) }, [])
    }

    package func add(_ records: [WakeRecord]) -> UInt64 {
        state.withLock { s in
            for record in records { s.wakes[record.id] = record }
            s.ticket += 1
            return s.ticket
        }
    }

    package func settle(_ ids: [String]) {
        state.withLock { s in for id in ids { s.wakes[id] = nil } }
    }

    package func save(_ key: TaskKey, _ record: TaskRecord, sync: Bool, then: (@Sendable () -> Void)?) {
        state.withLock { $0.records[key] = record }
        then?()
    }

    package func whenDurable(_ ticket: UInt64, _ body: @escaping @Sendable () -> Void) { body() }

    /// The acknowledged wakes not yet answered, oldest first.
    package var unsettledWakes: [WakeRecord] {
        state.withLock { $0.wakes.values.sorted { $0.acknowledgedUSec < $1.acknowledgedUSec } }
    }

    /// The record kept for `key`, if any.
    package func record(_ key: TaskKey) -> TaskRecord? { state.withLock { $0.records[key] } }
}
