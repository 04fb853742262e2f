import TaskScheduling
import TaskdProtocol

/// A task's durable state, `STATE/tasks/KIND:IDENTIFIER.json`: its last trigger and its last
/// runs (at most `History=`), newest last.
struct TaskRecord: Hashable, Sendable {
    var lastTriggerUSec: UInt64?
    var history: [RunInfo] = []

    /// The last run that is the task's own result (a stale run never is).
    var lastResult: RunInfo? { history.last { !$0.stale } }

    mutating func append(_ run: RunInfo, keep: Int) {
        history.append(run)
        if history.count > keep { history.removeFirst(history.count - max(keep, 0)) }
    }

    func encoded(_ key: TaskKey) -> [UInt8] {
        var o: [String: JSONValue] = [
            "version": .int(1), "task": .string(key.identifier), "kind": .string(key.kind),
            "history": .array(history.map(\.json)),
        ]
        if let lastTriggerUSec { o["lastTriggerUSec"] = .int(Int64(lastTriggerUSec)) }
        return Array((JSONValue.object(o).description + "\n").utf8)
    }

    /// Reads a record; nil when the text is not one (the caller moves the file aside).
    init?(decoding bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(String(decoding: bytes, as: UTF8.self)),
            json["version"]?.intValue == 1, let runs = json["history"]?.arrayValue
        else { return nil }
        lastTriggerUSec = json["lastTriggerUSec"]?.intValue.map { UInt64(clamping: $0) }
        history = runs.compactMap(RunInfo.init(json:))
        guard history.count == runs.count else { return nil }
    }

    init() {}
}
