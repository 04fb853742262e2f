import TaskScheduling

/// Where the daemon keeps what must outlive it: acknowledged wakes and each task's record
/// (history, persistent timers, health). `StateStore` in taskd, `MemoryStore` (`TaskdTestSupport`) in tests.
package protocol RunStore: AnyObject, Sendable {
    /// The records of `keys` that exist, and what was wrong with those that could not be read.
    func loadTasks(_ keys: [TaskKey]) async -> (tasks: [TaskKey: TaskRecord], problems: [String])
    /// Records acknowledged wakes; returns a ticket for `whenDurable` (`add([])` is a barrier).
    func add(_ records: [WakeRecord]) -> UInt64
    /// The runs answering these wake records ended for good.
    func settle(_ ids: [String])
    /// Keeps the latest state of a task; `then` runs once it is on disk (`sync`: and synced).
    func save(_ key: TaskKey, _ record: TaskRecord, sync: Bool, then: (@Sendable () -> Void)?)
    /// Runs `body` once the wakes added up to `ticket` are durable (at once if they are).
    func whenDurable(_ ticket: UInt64, _ body: @escaping @Sendable () -> Void)
}

extension RunStore {
    /// Returns once the wakes added up to `ticket` are durable.
    package func waitDurable(_ ticket: UInt64) async {
        await withCheckedContinuation { continuation in whenDurable(ticket) { continuation.resume() } }
    }
}
