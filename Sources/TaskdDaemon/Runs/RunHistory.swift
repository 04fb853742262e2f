import TaskScheduling
import TaskdProtocol

/// Each task's record (its last runs, persistent timers, health) as the daemon keeps it and hands
/// it to the store: changed records are saved after each batch of actions, and the ends that
/// watchers wait for are told once their record is on disk and every journal entry of the run has
/// been handed to journald, so `wake --wait && journalctl` finds them (docs/journal.md). Held by the
/// daemon, so used on the loop only (not `Sendable`).
final class RunHistory: RunEventObserver {
    private(set) var records: [TaskKey: TaskRecord]
    private let store: any RunStore
    /// `History=` of the tasks that do not keep the default number of runs (20).
    private var historySizes: [TaskKey: Int] = [:]
    /// Tasks whose record changed since it was last handed to the store.
    private var dirty: Set<TaskKey> = []
    /// Ended runs that watchers learn of once the history that records them is on disk.
    private var endedAwaitingDisk: [TaskKey: [Run]] = [:]

    init(records: [TaskKey: TaskRecord], store: any RunStore, tasks: [TaskDefinition]) {
        self.records = records
        self.store = store
        configure(tasks)
    }

    /// The tasks in effect (at start and at each reload): how many runs each keeps.
    func configure(_ tasks: [TaskDefinition]) {
        historySizes = [:]
        for d in tasks where d.historySize != Self.defaultSize { historySizes[d.key] = d.historySize }
    }

    /// One task added or changed (a task submitted): how many runs it keeps.
    func configure(adding d: TaskDefinition) {
        historySizes[d.key] = d.historySize != Self.defaultSize ? d.historySize : nil
    }

    /// How many runs a task keeps when its `History=` is not set.
    static let defaultSize = TaskDefinition(key: TaskKey(kind: "processing", identifier: "x"), handler: .swift)
        .historySize

    func observe(_ event: SchedulerEvent) {
        guard case .ended(let run) = event else { return }
        records[run.key, default: TaskRecord()].append(RunInfo(run), keep: historySizes[run.key] ?? Self.defaultSize)
        // The work is done: the next run starts from the beginning.
        if run.outcome == .completed, !run.fenced { records[run.key]?.checkpoint = nil }
        dirty.insert(run.key)
        endedAwaitingDisk[run.key, default: []].append(run)
    }

    /// Changes the task's record (a persistent trigger, a request, its health).
    func update(_ key: TaskKey, _ change: (inout TaskRecord) -> Void) {
        change(&records[key, default: TaskRecord()])
        dirty.insert(key)
    }

    /// Keeps `checkpoint` as the task's; `then` runs once the record is on disk and synced.
    func keep(_ checkpoint: TaskCheckpoint, for key: TaskKey, then: @escaping @Sendable () -> Void) {
        records[key, default: TaskRecord()].checkpoint = checkpoint
        store.save(key, records[key]!, sync: true, then: then)
    }

    /// Keeps records loaded for tasks added by a reload.
    func adopt(_ loaded: [TaskKey: TaskRecord]) {
        for (key, record) in loaded where records[key] == nil { records[key] = record }
    }

    /// Drops the record of a task that is gone for good (a spent submitted task), once saved.
    func forget(_ key: TaskKey) {
        records[key] = nil
        historySizes[key] = nil
    }

    /// Hands every changed record to the store; `deliver` gets the ended runs `watchers` follow,
    /// on the event loop, once they are on disk and journaled. Ends no one follows are written
    /// without an fsync.
    func save(
        watchers: RunWatchers, journal: EventJournal, deliver: @escaping @Sendable ([Run]) -> Void
    ) {
        for key in dirty.sorted() {
            let ended = endedAwaitingDisk.removeValue(forKey: key) ?? []
            let watched = ended.filter(watchers.follows)
            let record = records[key] ?? TaskRecord()
            guard !watched.isEmpty else {
                store.save(key, record, sync: false, then: nil)
                continue
            }
            store.save(key, record, sync: true) { journal.whenHandedOn { deliver(watched) } }
        }
        dirty.removeAll()
        endedAwaitingDisk.removeAll()
    }

    /// The run as recorded, whichever task's it is (a look through every history).
    func ended(_ id: String) -> RunInfo? {
        for record in records.values { if let info = record.history.last(where: { $0.runId == id }) { return info } }
        return nil
    }

    /// The run as recorded: the history entry of `id` for `key`, if any.
    func ended(_ id: String, of key: TaskKey) -> RunInfo? { records[key]?.history.last { $0.runId == id } }
}
