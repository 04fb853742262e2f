/// The last checkpoint a task's handler kept (`context.checkpoint`, a `CHECKPOINT=` notify line):
/// its text, the run that kept it and when (CLOCK_REALTIME µs). Kept in the task's state file until
/// a run completes, and handed to the next run (`ResumeFrom=checkpoint`).
public struct TaskCheckpoint: Hashable, Sendable {
    /// The most a checkpoint may hold, in bytes (its UTF-8 text).
    public static let maxBytes = 65536

    public var value: String
    public var runID: String
    public var atUSec: UInt64

    public init(value: String, runID: String, atUSec: UInt64) {
        self.value = value
        self.runID = runID
        self.atUSec = atUSec
    }

    /// As the state file keeps it.
    public var json: JSONValue {
        .object(["value": .string(value), "runId": .string(runID), "atUSec": .int(Int64(clamping: atUSec))])
    }

    public init?(json: JSONValue) {
        guard let value = json["value"]?.stringValue, let runID = json["runId"]?.stringValue,
            let at = json["atUSec"]?.intValue
        else { return nil }
        self.init(value: value, runID: runID, atUSec: UInt64(clamping: at))
    }
}
