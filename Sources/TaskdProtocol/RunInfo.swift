import TaskScheduling

/// The `RunInfo` type of the IDL: built from a `Run` by the daemon, read back by clients, and kept
/// as the task's history in the state folder.
public struct RunInfo: Hashable, Sendable, JSONValueConvertible {
    public var task: String
    public var kind: String
    public var runId: String
    public var trigger: Trigger
    public var attempt: Int
    public var state: RunState
    /// What the wake did for this task: started, coalesced, queued or overflow.
    public var disposition: WakeDisposition
    public var wakeId: String?
    public var queuedUSec: UInt64
    /// When its trigger was due: a timer's nominal elapse, a retry's due time, a wake's acknowledgement.
    public var scheduledUSec: UInt64?
    public var startedUSec: UInt64?
    public var deadlineUSec: UInt64?
    public var budgetUSec: UInt64
    public var waitedUSec: UInt64?
    public var endedUSec: UInt64?
    public var durationUSec: UInt64?
    public var exitStatus: Int32?
    public var signal: String?
    public var cancelReason: String?
    public var error: String?
    /// True for a run detached by a cancel: what its handler reported is not the task's result.
    public var stale: Bool
    /// What a Swift handler returned (its `Encodable` result).
    public var result: JSONValue?
    /// What a queued run waits for before it starts: `on AC power, battery not low`.
    public var waitingFor: String?
    /// The failed run this one retries (or does the work of in place of its retry).
    public var previousRunId: String?
    /// On a failed run followed by `Wake` with `more`: the next attempt starts this long after its
    /// end (µs); the following replies follow that attempt.
    public var retryInUSec: UInt64?
    /// True when the handler ended by itself, successfully, after its cancellation: done
    /// partially, not retried.
    public var partial: Bool
    /// What the handler last reported: units done, of how many, and a line of status.
    public var progressCompleted: Int64?
    public var progressTotal: Int64?
    public var status: String?
    /// Why a failed run failed, where it is more than its exit: `oom` (its cgroup's `MemoryMax=`).
    public var failureReason: String?
    /// What a command's run used: CPU time, peak memory, bytes read and written (`RunUsage`).
    public var cpuUSec: UInt64?
    public var memoryPeakBytes: UInt64?
    public var ioReadBytes: UInt64?
    public var ioWriteBytes: UInt64?
    /// For a fleet task's run: the host that held or ran its slot, and that claim's fence token.
    public var fleetHost: String?
    public var fenceToken: UInt64?

    public init(_ run: Run, disposition: WakeDisposition = .started) {
        task = run.key.identifier
        kind = run.key.kind
        runId = run.id
        trigger = run.trigger
        attempt = run.attempt
        state = run.state
        self.disposition = disposition
        wakeId = run.wakeID
        queuedUSec = run.queued.realtime
        scheduledUSec = run.scheduledRealtime
        startedUSec = run.started?.realtime
        deadlineUSec = run.deadlineRealtime
        budgetUSec = run.budget.microseconds
        waitedUSec = run.waited
        endedUSec = run.ended?.realtime
        durationUSec = run.duration
        cancelReason = run.cancelReason?.rawValue
        stale = run.fenced && run.outcome != nil
        result = run.result.flatMap { try? JSONParser.parse($0) }
        partial = run.partial
        previousRunId = run.previousAttemptID
        waitingFor = run.waitingFor.isEmpty ? nil : run.waitingFor.map(\.waitingText).joined(separator: ", ")
        if run.waitingForGroup, let group = run.group { waitingFor = "its turn in ConcurrencyGroup=\(group)" }
        if !run.after.isEmpty {
            waitingFor = "run " + run.after.map { String($0.prefix(8)) }.joined(separator: ", ") + " to end (After=)"
        }
        progressCompleted = run.progress?.completed
        progressTotal = run.progress?.total
        status = run.progress?.status
        fleetHost = run.fleetHost
        fenceToken = run.fenceToken
        switch run.termination {
        case .exited(let code)?: exitStatus = code
        case .signaled(let sig)?: signal = SignalNames.name(sig)
        case .threw(let message)?, .threwNoRetry(let message)?, .spawnFailed(let message)?: error = message
        case .outOfMemory?:
            signal = "SIGKILL"
            failureReason = "oom"
        case .lost(let message)?:
            error = message
            failureReason = "lost"
        case .returned?, nil: break
        }
        cpuUSec = run.usage?.cpuUSec
        memoryPeakBytes = run.usage?.memoryPeakBytes
        ioReadBytes = run.usage?.ioReadBytes
        ioWriteBytes = run.usage?.ioWriteBytes
    }

    /// True once the run has an outcome.
    public var hasEnded: Bool { state.hasEnded }
    /// True when the wake joined a run that already existed.
    public var coalesced: Bool { disposition == .coalesced || disposition == .overflow }

    /// The run as a JSON value (for replies built as values, and taskctl's `--json`): `encodedJSON` read back.
    public var json: JSONValue { (try? JSONParser.parse(encodedJSON)) ?? .null }

    /// The run's JSON text, its one encoder, members in sorted order as `JSONValue` prints them:
    /// written directly (no dictionary to build, hash and sort), for every reply, every end of a run
    /// and every save of a task's history.
    public var encodedJSON: [UInt8] {
        var o = JSONObjectWriter()
        o.int("attempt", Int64(attempt))
        o.int("budgetUSec", budgetUSec)
        o.string("cancelReason", cancelReason)
        o.bool("coalesced", coalesced)
        o.int("cpuUSec", cpuUSec)
        o.int("deadlineUSec", deadlineUSec)
        o.string("disposition", disposition.rawValue)
        o.int("durationUSec", durationUSec)
        o.int("endedUSec", endedUSec)
        o.string("error", error)
        o.int("exitStatus", exitStatus.map { Int64($0) })
        o.string("failureReason", failureReason)
        o.int("fenceToken", fenceToken)
        o.string("fleetHost", fleetHost)
        o.int("ioReadBytes", ioReadBytes)
        o.int("ioWriteBytes", ioWriteBytes)
        o.string("kind", kind)
        o.int("memoryPeakBytes", memoryPeakBytes)
        if partial { o.bool("partial", true) }
        o.string("previousRunId", previousRunId)
        o.int("progressCompleted", progressCompleted)
        o.int("progressTotal", progressTotal)
        o.int("queuedUSec", queuedUSec)
        o.value("result", result)
        o.int("retryInUSec", retryInUSec)
        o.string("runId", runId)
        o.int("scheduledUSec", scheduledUSec)
        o.string("signal", signal)
        o.bool("stale", stale)
        o.int("startedUSec", startedUSec)
        o.string("state", state.rawValue)
        o.string("status", status)
        o.string("task", task)
        o.string("trigger", trigger.rawValue)
        o.int("waitedUSec", waitedUSec)
        o.string("waitingFor", waitingFor)
        o.string("wakeId", wakeId)
        return o.finish()
    }

    /// Reads a `RunInfo` object; nil when a required field is missing or a state, trigger or
    /// disposition is not one this version knows.
    public init?(json: JSONValue) {
        guard let task = json["task"]?.stringValue, let kind = json["kind"]?.stringValue,
            let runId = json["runId"]?.stringValue, let state = json["state"]?.stringValue.flatMap(RunState.init),
            let trigger = json["trigger"]?.stringValue.flatMap(Trigger.init),
            let disposition = WakeDisposition(rawValue: json["disposition"]?.stringValue ?? "started")
        else { return nil }
        func number(_ key: String) -> UInt64? { json[key]?.intValue.map { UInt64(clamping: $0) } }
        self.task = task
        self.kind = kind
        self.runId = runId
        self.state = state
        self.trigger = trigger
        attempt = Int(json["attempt"]?.intValue ?? 1)
        self.disposition = disposition
        wakeId = json["wakeId"]?.stringValue
        queuedUSec = number("queuedUSec") ?? 0
        scheduledUSec = number("scheduledUSec")
        startedUSec = number("startedUSec")
        deadlineUSec = number("deadlineUSec")
        budgetUSec = number("budgetUSec") ?? 0
        waitedUSec = number("waitedUSec")
        endedUSec = number("endedUSec")
        durationUSec = number("durationUSec")
        exitStatus = json["exitStatus"]?.intValue.map { Int32(truncatingIfNeeded: $0) }
        signal = json["signal"]?.stringValue
        cancelReason = json["cancelReason"]?.stringValue
        error = json["error"]?.stringValue
        stale = json["stale"]?.boolValue ?? false
        result = json["result"]
        partial = json["partial"]?.boolValue ?? false
        previousRunId = json["previousRunId"]?.stringValue
        waitingFor = json["waitingFor"]?.stringValue
        retryInUSec = number("retryInUSec")
        progressCompleted = json["progressCompleted"]?.intValue
        progressTotal = json["progressTotal"]?.intValue
        status = json["status"]?.stringValue
        failureReason = json["failureReason"]?.stringValue
        fleetHost = json["fleetHost"]?.stringValue
        fenceToken = number("fenceToken")
        cpuUSec = number("cpuUSec")
        memoryPeakBytes = number("memoryPeakBytes")
        ioReadBytes = number("ioReadBytes")
        ioWriteBytes = number("ioWriteBytes")
    }
}
