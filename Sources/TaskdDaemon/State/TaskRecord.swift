import TaskScheduling
import TaskdProtocol

/// A task's durable state, `STATE/tasks/KIND:IDENTIFIER.json`: its last trigger, the run its
/// handler asked for, and its last runs (at most `History=`), newest last.
package struct TaskRecord: Hashable, Sendable {
    var lastTriggerUSec: UInt64?
    /// The run the task's handler asked for (`TaskContext.scheduleNext(after:)`), CLOCK_REALTIME µs.
    var requestedUSec: UInt64?
    /// How the task has been doing: its last success, failures in a row, alerts raised, its pause.
    var health: TaskHealth?
    /// The last checkpoint a run kept, until a run completes (`ResumeFrom=`).
    var checkpoint: TaskCheckpoint?
    private(set) var history: [RunInfo] = []
    /// Each history entry's JSON, kept beside it: a save re-encodes only what changed.
    private var historyJSON: [[UInt8]] = []

    /// The health kept, its last success the later of the kept one and the history's (a success
    /// alone is not kept in `health` for every task: see `Scheduler.recordEnd`).
    var knownHealth: TaskHealth? {
        let fromHistory = history.last { !$0.stale && $0.state == .completed }?.endedUSec
        guard health != nil || fromHistory != nil else { return nil }
        var h = health ?? TaskHealth()
        h.lastSuccess = [h.lastSuccess, fromHistory].compactMap { $0 }.max()
        return h
    }

    /// The last run that is the task's own result (a stale run never is).
    var lastResult: RunInfo? { history.last { !$0.stale } }

    mutating func append(_ run: RunInfo, keep: Int) {
        history.append(run)
        historyJSON.append(run.encodedJSON)
        if history.count > keep {
            history.removeFirst(history.count - max(keep, 0))
            historyJSON.removeFirst(historyJSON.count - max(keep, 0))
        }
    }

    /// The file's bytes: one JSON object with sorted keys, and a newline.
    func encoded(_ key: TaskKey) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(historyJSON.reduce(128) { $0 + $1.count + 1 })
        out.append(contentsOf: #"{"history":["#.utf8)
        for (i, entry) in historyJSON.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: entry)
        }
        out.append(contentsOf: #"]"#.utf8)
        if let checkpoint {
            out.append(contentsOf: #","checkpoint":"#.utf8)
            out.append(contentsOf: Array(checkpoint.json.description.utf8))
        }
        if let health, health != TaskHealth() {
            out.append(contentsOf: #","health":"#.utf8)
            out.append(contentsOf: Array(Self.encode(health).description.utf8))
        }
        out.append(contentsOf: #","kind":"#.utf8)
        JSONValue.writeString(key.kind, to: &out)
        if let lastTriggerUSec {
            out.append(contentsOf: #","lastTriggerUSec":"#.utf8)
            JSONValue.writeInteger(Int64(clamping: lastTriggerUSec), to: &out)
        }
        if let requestedUSec {
            out.append(contentsOf: #","requestedUSec":"#.utf8)
            JSONValue.writeInteger(Int64(clamping: requestedUSec), to: &out)
        }
        out.append(contentsOf: #","task":"#.utf8)
        JSONValue.writeString(key.identifier, to: &out)
        out.append(contentsOf: #","version":1}"#.utf8)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// Reads a record; nil when the text is not one (the caller moves the file aside).
    init?(decoding bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(String(decoding: bytes, as: UTF8.self)),
            json["version"]?.intValue == 1, let runs = json["history"]?.arrayValue
        else { return nil }
        lastTriggerUSec = json["lastTriggerUSec"]?.intValue.map { UInt64(clamping: $0) }
        requestedUSec = json["requestedUSec"]?.intValue.map { UInt64(clamping: $0) }
        health = json["health"].map(Self.decode)
        checkpoint = json["checkpoint"].flatMap(TaskCheckpoint.init(json:))
        history = runs.compactMap(RunInfo.init(json:))
        guard history.count == runs.count else { return nil }
        historyJSON = history.map(\.encodedJSON)
    }

    init() {}

    /// The health as the record keeps it (the last refusal is not kept).
    static func encode(_ h: TaskHealth) -> JSONValue {
        var o: [String: JSONValue] = [:]
        if let last = h.lastSuccess { o["lastSuccessUSec"] = .int(Int64(clamping: last)) }
        if h.consecutiveFailures > 0 { o["consecutiveFailures"] = .int(Int64(h.consecutiveFailures)) }
        if h.overdue { o["overdue"] = .bool(true) }
        if h.failing { o["failing"] = .bool(true) }
        if let pause = h.pause {
            var p: [String: JSONValue] = ["sinceUSec": .int(Int64(clamping: pause.since)), "note": .string(pause.note)]
            if let until = pause.until { p["untilUSec"] = .int(Int64(clamping: until)) }
            o["pause"] = .object(p)
        }
        return .object(o)
    }

    static func decode(_ json: JSONValue) -> TaskHealth {
        var h = TaskHealth()
        h.lastSuccess = json["lastSuccessUSec"]?.intValue.map { UInt64(clamping: $0) }
        h.consecutiveFailures = Int(json["consecutiveFailures"]?.intValue ?? 0)
        h.overdue = json["overdue"]?.boolValue ?? false
        h.failing = json["failing"]?.boolValue ?? false
        if let p = json["pause"], let since = p["sinceUSec"]?.intValue {
            h.pause = TaskPause(
                since: UInt64(clamping: since), until: p["untilUSec"]?.intValue.map { UInt64(clamping: $0) },
                note: p["note"]?.stringValue ?? "")
        }
        return h
    }
}
