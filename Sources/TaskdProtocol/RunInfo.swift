import TaskScheduling

/// The `RunInfo` type of the IDL: built from a `Run` by the daemon, read back by clients.
public struct RunInfo: Hashable, Sendable {
    public var task: String
    public var kind: String
    public var runId: String
    public var trigger: String
    public var attempt: Int
    public var state: String
    public var coalesced: Bool
    public var wakeId: String?
    public var startedUSec: UInt64
    public var deadlineUSec: UInt64
    public var budgetUSec: UInt64
    public var durationUSec: UInt64?
    public var exitStatus: Int32?
    public var signal: String?
    public var cancelReason: String?
    public var error: String?

    public init(_ run: Run, coalesced: Bool = false) {
        task = run.key.identifier
        kind = run.key.kind
        runId = run.id
        trigger = run.trigger.rawValue
        attempt = run.attempt
        state = run.state
        self.coalesced = coalesced
        wakeId = run.wakeID
        startedUSec = run.started.realtime
        deadlineUSec = run.deadlineRealtime
        budgetUSec = run.budget.microseconds
        durationUSec = run.duration
        cancelReason = run.cancelReason?.rawValue
        switch run.termination {
        case .exited(let code)?: exitStatus = code
        case .signaled(let sig)?: signal = SignalNames.name(sig)
        case .threw(let message)?, .spawnFailed(let message)?: error = message
        case .returned?, nil: break
        }
    }

    /// True once the run has an outcome.
    public var hasEnded: Bool { RunOutcome(rawValue: state) != nil }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "task": .string(task), "kind": .string(kind), "runId": .string(runId), "trigger": .string(trigger),
            "attempt": .int(Int64(attempt)), "state": .string(state), "coalesced": .bool(coalesced),
            "startedUSec": .int(Int64(startedUSec)), "deadlineUSec": .int(Int64(deadlineUSec)),
            "budgetUSec": .int(Int64(budgetUSec)),
        ]
        if let wakeId { o["wakeId"] = .string(wakeId) }
        if let durationUSec { o["durationUSec"] = .int(Int64(durationUSec)) }
        if let exitStatus { o["exitStatus"] = .int(Int64(exitStatus)) }
        if let signal { o["signal"] = .string(signal) }
        if let cancelReason { o["cancelReason"] = .string(cancelReason) }
        if let error { o["error"] = .string(error) }
        return .object(o)
    }

    /// Reads a `RunInfo` object; nil when a required field is missing.
    public init?(json: JSONValue) {
        guard let task = json["task"]?.stringValue, let kind = json["kind"]?.stringValue,
            let runId = json["runId"]?.stringValue, let state = json["state"]?.stringValue
        else { return nil }
        self.task = task
        self.kind = kind
        self.runId = runId
        self.state = state
        trigger = json["trigger"]?.stringValue ?? ""
        attempt = Int(json["attempt"]?.intValue ?? 1)
        coalesced = json["coalesced"]?.boolValue ?? false
        wakeId = json["wakeId"]?.stringValue
        startedUSec = UInt64(json["startedUSec"]?.intValue ?? 0)
        deadlineUSec = UInt64(json["deadlineUSec"]?.intValue ?? 0)
        budgetUSec = UInt64(json["budgetUSec"]?.intValue ?? 0)
        durationUSec = json["durationUSec"]?.intValue.map { UInt64($0) }
        exitStatus = json["exitStatus"]?.intValue.map { Int32(truncatingIfNeeded: $0) }
        signal = json["signal"]?.stringValue
        cancelReason = json["cancelReason"]?.stringValue
        error = json["error"]?.stringValue
    }
}
