import TaskScheduling
import TaskdProtocol

/// A task's durable state, `STATE/tasks/KIND:IDENTIFIER.json`: its last trigger, the run its
/// handler asked for, and its last runs (at most `History=`), newest last.
struct TaskRecord: Hashable, Sendable {
    var lastTriggerUSec: UInt64?
    /// The run the task's handler asked for (`TaskContext.scheduleNext(after:)`), CLOCK_REALTIME µs.
    var requestedUSec: UInt64?
    private(set) var history: [RunInfo] = []
    /// Each history entry's JSON, kept beside it: a save re-encodes only what changed.
    private var historyJSON: [[UInt8]] = []

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
        out.append(contentsOf: #"],"kind":"#.utf8)
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
        history = runs.compactMap(RunInfo.init(json:))
        guard history.count == runs.count else { return nil }
        historyJSON = history.map(\.encodedJSON)
    }

    init() {}
}
