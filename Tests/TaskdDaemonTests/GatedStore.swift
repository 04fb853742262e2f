import Synchronization
import TaskScheduling
import TaskdTestSupport

@testable import TaskdDaemon

/// A `MemoryStore` whose synced saves are on disk only when the test opens the gate: it shows what
/// waits for a record to be durable.
final class GatedStore: RunStore {
    let base = MemoryStore()
    private let held = Mutex<[@Sendable () -> Void]>([])

    func loadTasks(_ keys: [TaskKey]) async -> (tasks: [TaskKey: TaskRecord], problems: [String]) {
        await base.loadTasks(keys)
    }

    func add(_ records: [WakeRecord]) -> UInt64 { base.add(records) }
    func settle(_ ids: [String]) { base.settle(ids) }
    func whenDurable(_ ticket: UInt64, _ body: @escaping @Sendable () -> Void) { base.whenDurable(ticket, body) }

    /// Keeps the record at once; a synced save's `then` waits for `open()`.
    func save(_ key: TaskKey, _ record: TaskRecord, sync: Bool, then: (@Sendable () -> Void)?) {
        base.save(key, record, sync: sync, then: nil)
        guard let then else { return }
        held.withLock { $0.append(then) }
    }

    /// How many synced saves wait to be on disk.
    var waiting: Int { held.withLock { $0.count } }

    /// The synced saves so far are on disk: their `then` runs (call it on the event loop).
    func open() {
        for then in held.withLock({ h in
            defer { h.removeAll() }; return h
        }) { then() }
    }
}
