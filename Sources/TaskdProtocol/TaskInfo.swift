import TaskScheduling

/// The `TaskInfo` type of the IDL: a task, its run in progress, its queue, its pending retry,
/// its last results and its next elapse.
public struct TaskInfo: Hashable, Sendable, JSONValueConvertible {
    public var name: String
    public var kind: String
    public var description: String
    public var handler: String
    public var budgetUSec: UInt64
    public var cancelGraceUSec: UInt64
    public var overlap: String
    public var maxAttempts: Int
    public var current: RunInfo?
    public var queue: [RunInfo]
    /// The other runs in progress beside `current` (`Overlap=allow`), oldest first.
    public var instances: [RunInfo]
    public var retryAttempt: Int?
    public var retryDueUSec: UInt64?
    /// The last run that is the task's own result (never a stale one).
    public var last: RunInfo?
    /// The last few runs, the last to end first.
    public var recent: [RunInfo]
    public var nextElapseUSec: UInt64?
    public var lastTriggerUSec: UInt64?
    /// How it has been doing: its last completed run's end, the runs that failed in a row since,
    /// and whether it is overdue (`ExpectSuccessWithinSec=`).
    public var lastSuccessUSec: UInt64?
    public var consecutiveFailures: Int = 0
    public var overdue = false
    /// Paused (`taskctl pause`, `PauseAfterFailures=`): since when, until when (nil: until
    /// resumed), and the note.
    public var pausedSinceUSec: UInt64?
    public var pausedUntilUSec: UInt64?
    public var pauseNote: String?
    /// `Fleet=` when the hosts of a fleet share the task: `once` or `max:N` (nil: `host`).
    public var fleet: String?
    /// The checkpoint kept for the next run, if any: its size in bytes, the run that kept it and
    /// when; `resumeFrom` is `ResumeFrom=` (`checkpoint` or `start`).
    public var checkpointBytes: Int?
    public var checkpointRunId: String?
    public var checkpointUSec: UInt64?
    public var resumeFrom: String

    /// Builds the view of `state`; `now` converts monotonic instants to realtime.
    public init(
        _ state: TaskState, current: Run?, instances: [Run] = [], queued: [Run] = [], recent: [RunInfo] = [],
        last: RunInfo? = nil,
        health: TaskHealth = TaskHealth(), now: ClockReading
    ) {
        let d = state.definition
        name = d.key.identifier
        kind = d.key.kind
        description = d.description
        handler = d.handler.label
        budgetUSec = d.budget.microseconds
        cancelGraceUSec = d.cancelGrace.microseconds
        overlap = d.overlap.rawValue
        maxAttempts = d.retry.maxAttempts
        self.current = current.map { RunInfo($0) }
        queue = queued.map { RunInfo($0, disposition: .queued) }
        self.instances = instances.map { RunInfo($0) }
        retryAttempt = state.retry?.attempt
        retryDueUSec = state.retry.map { now.realtime(at: $0.due) }
        self.last = last ?? state.lastRun.map { RunInfo($0) }
        self.recent = recent
        nextElapseUSec = state.nextElapseRealtime(now: now)
        lastTriggerUSec = state.lastTrigger?.realtime
        lastSuccessUSec = health.lastSuccess
        consecutiveFailures = health.consecutiveFailures
        overdue = health.overdue
        pausedSinceUSec = health.pause?.since
        pausedUntilUSec = health.pause?.until
        pauseNote = health.pause?.note
        fleet = d.fleet == .host ? nil : d.fleet.description
        resumeFrom = d.resumeFrom.rawValue
    }

    /// Shows `checkpoint`, the one kept for the task's next run.
    public mutating func show(_ checkpoint: TaskCheckpoint?) {
        checkpointBytes = checkpoint.map { $0.value.utf8.count }
        checkpointRunId = checkpoint?.runID
        checkpointUSec = checkpoint?.atUSec
    }

    /// True while paused.
    public var paused: Bool { pausedSinceUSec != nil }

    /// The task as a JSON value (taskctl's `--json`): `encodedJSON` read back.
    public var json: JSONValue { (try? JSONParser.parse(encodedJSON)) ?? .null }

    /// The task's JSON text, its one encoder, members in sorted order as `JSONValue` prints them:
    /// written directly, as `List` writes 10,000 of them.
    public var encodedJSON: [UInt8] {
        var o = JSONObjectWriter()
        o.int("budgetUSec", budgetUSec)
        o.int("cancelGraceUSec", cancelGraceUSec)
        o.int("checkpointBytes", checkpointBytes.map { Int64($0) })
        o.string("checkpointRunId", checkpointRunId)
        o.int("checkpointUSec", checkpointUSec)
        o.int("consecutiveFailures", Int64(consecutiveFailures))
        if let current { o.json("current", current.encodedJSON) }
        o.string("description", description)
        o.string("fleet", fleet)
        o.string("handler", handler)
        if !instances.isEmpty { o.json("instances", JSONObjectWriter.array(instances.map(\.encodedJSON))) }
        o.string("kind", kind)
        if let last { o.json("last", last.encodedJSON) }
        o.int("lastSuccessUSec", lastSuccessUSec)
        o.int("lastTriggerUSec", lastTriggerUSec)
        o.int("maxAttempts", Int64(maxAttempts))
        o.string("name", name)
        o.int("nextElapseUSec", nextElapseUSec)
        o.bool("overdue", overdue)
        o.string("overlap", overlap)
        o.string("pauseNote", pauseNote)
        o.bool("paused", paused)
        o.int("pausedSinceUSec", pausedSinceUSec)
        o.int("pausedUntilUSec", pausedUntilUSec)
        o.json("queue", JSONObjectWriter.array(queue.map(\.encodedJSON)))
        o.json("recent", JSONObjectWriter.array(recent.map(\.encodedJSON)))
        o.string("resumeFrom", resumeFrom)
        o.int("retryAttempt", retryAttempt.map { Int64($0) })
        o.int("retryDueUSec", retryDueUSec)
        return o.finish()
    }

    public init?(json: JSONValue) {
        guard let name = json["name"]?.stringValue, let kind = json["kind"]?.stringValue else { return nil }
        func number(_ key: String) -> UInt64? { json[key]?.intValue.map { UInt64(clamping: $0) } }
        self.name = name
        self.kind = kind
        description = json["description"]?.stringValue ?? ""
        handler = json["handler"]?.stringValue ?? ""
        budgetUSec = number("budgetUSec") ?? 0
        cancelGraceUSec = number("cancelGraceUSec") ?? 0
        overlap = json["overlap"]?.stringValue ?? "coalesce"
        maxAttempts = Int(json["maxAttempts"]?.intValue ?? 1)
        current = json["current"].flatMap(RunInfo.init(json:))
        queue = (json["queue"]?.arrayValue ?? []).compactMap(RunInfo.init(json:))
        instances = (json["instances"]?.arrayValue ?? []).compactMap(RunInfo.init(json:))
        retryAttempt = json["retryAttempt"]?.intValue.map { Int($0) }
        retryDueUSec = number("retryDueUSec")
        last = json["last"].flatMap(RunInfo.init(json:))
        recent = (json["recent"]?.arrayValue ?? []).compactMap(RunInfo.init(json:))
        nextElapseUSec = number("nextElapseUSec")
        lastTriggerUSec = number("lastTriggerUSec")
        lastSuccessUSec = number("lastSuccessUSec")
        consecutiveFailures = Int(json["consecutiveFailures"]?.intValue ?? 0)
        overdue = json["overdue"]?.boolValue ?? false
        pausedSinceUSec = number("pausedSinceUSec")
        pausedUntilUSec = number("pausedUntilUSec")
        pauseNote = json["pauseNote"]?.stringValue
        fleet = json["fleet"]?.stringValue
        checkpointBytes = json["checkpointBytes"]?.intValue.map { Int($0) }
        checkpointRunId = json["checkpointRunId"]?.stringValue
        checkpointUSec = number("checkpointUSec")
        resumeFrom = json["resumeFrom"]?.stringValue ?? "checkpoint"
    }
}
