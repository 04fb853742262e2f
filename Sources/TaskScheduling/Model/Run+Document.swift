/// The run document: `Run`'s one encoding and one decoding, every stored property under a key of
/// `CodingKeys`. The upgrade's hand-off, `active-runs.json`, the keeper's copy (`RunSnapshot`)
/// and `cut-runs.json` (`CutRun`) all write it; the history keeps the IDL's view (`RunInfo`).
///
/// Compatible both ways with `RunSnapshot`'s form from before the document: the keys it wrote
/// are written as it wrote them (instants as `[monotonic, realtime]`, a `UInt64.max` deadline left
/// out, as JSON numbers stop at 2⁶³; the phase as a word with its `reason`), so a previous taskd
/// reads a new document; the keys added since are written only when they differ from a new run's
/// value, and a key the reader misses (but the required ones of `init(from:)`) takes that value.
extension Run: Codable {
    enum CodingKeys: String, CodingKey {
        // RunSnapshot's keys.
        case id, kind, identifier, trigger, attempt, wakeID, previousAttemptID, payload, queued, scheduledRealtime
        case started, budget, cancelGrace, inProcess, blocksSleep, cancelAt, killAt, phase, reason, fenced, records
        case progressCompleted, progressTotal, progressStatus, progressReportedAt, progressTimeout, progressToldAt
        case progressUntold, fleetHost, fenceToken
        // Added with the run document: the rest of the run.
        case outcome, termination, ended, result, checkpoint, checkpointRunID, waitingFor, group, waitingForGroup
        case after, lostConditions, partial, usage
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(key.kind, forKey: .kind)
        try c.encode(key.identifier, forKey: .identifier)
        try c.encode(trigger.rawValue, forKey: .trigger)
        try c.encode(attempt, forKey: .attempt)
        try c.encodeIfPresent(wakeID, forKey: .wakeID)
        try c.encodeIfPresent(previousAttemptID, forKey: .previousAttemptID)
        try c.encodeIfPresent(payload, forKey: .payload)
        try c.encode(queued.pair, forKey: .queued)
        try c.encode(scheduledRealtime, forKey: .scheduledRealtime)
        try c.encodeIfPresent(started?.pair, forKey: .started)
        try c.encodeIfPresent(Self.finite(budget.microseconds), forKey: .budget)
        try c.encodeIfPresent(Self.finite(cancelGrace.microseconds), forKey: .cancelGrace)
        try c.encode(inProcess, forKey: .inProcess)
        try c.encode(blocksSleep, forKey: .blocksSleep)
        try c.encodeIfPresent(Self.finite(cancelAt), forKey: .cancelAt)
        try c.encodeIfPresent(Self.finite(killAt), forKey: .killAt)
        try c.encode(phase.word, forKey: .phase)
        try c.encodeIfPresent(cancelReason?.rawValue, forKey: .reason)
        try c.encode(fenced, forKey: .fenced)
        try c.encode(records, forKey: .records)
        try c.encodeIfPresent(progress?.completed, forKey: .progressCompleted)
        try c.encodeIfPresent(progress?.total, forKey: .progressTotal)
        try c.encodeIfPresent(progress?.status, forKey: .progressStatus)
        try c.encodeIfPresent(progress?.reportedAt, forKey: .progressReportedAt)
        try c.encode(progressTimeout, forKey: .progressTimeout)
        try c.encodeIfPresent(progressToldAt, forKey: .progressToldAt)
        try c.encode(progressUntold, forKey: .progressUntold)
        try c.encodeIfPresent(fleetHost, forKey: .fleetHost)
        try c.encodeIfPresent(fenceToken, forKey: .fenceToken)
        try c.encodeIfPresent(outcome?.rawValue, forKey: .outcome)
        try c.encodeIfPresent(termination, forKey: .termination)
        try c.encodeIfPresent(ended?.pair, forKey: .ended)
        try c.encodeIfPresent(result, forKey: .result)
        try c.encodeIfPresent(checkpoint, forKey: .checkpoint)
        try c.encodeIfPresent(checkpointRunID, forKey: .checkpointRunID)
        if !waitingFor.isEmpty { try c.encode(waitingFor, forKey: .waitingFor) }
        try c.encodeIfPresent(group, forKey: .group)
        if waitingForGroup { try c.encode(true, forKey: .waitingForGroup) }
        if !after.isEmpty { try c.encode(after, forKey: .after) }
        if !lostConditions.isEmpty { try c.encode(lostConditions, forKey: .lostConditions) }
        if partial { try c.encode(true, forKey: .partial) }
        try c.encodeIfPresent(usage, forKey: .usage)
    }

    /// Reads a run document; throws when a required key (`id`, `kind`, `identifier`, `trigger`,
    /// `attempt`, `queued`, `phase`) is missing, or it names a trigger, phase or reason this taskd
    /// does not know.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let word = try c.decode(String.self, forKey: .trigger)
        guard let trigger = Trigger(rawValue: word) else {
            throw DecodingError.dataCorruptedError(forKey: .trigger, in: c, debugDescription: "unknown trigger \(word)")
        }
        guard let queued = try Self.reading(c, .queued) else {
            throw DecodingError.keyNotFound(
                CodingKeys.queued, .init(codingPath: c.codingPath, debugDescription: "missing"))
        }
        self.init(
            id: try c.decode(String.self, forKey: .id),
            key: TaskKey(
                kind: try c.decode(String.self, forKey: .kind),
                identifier: try c.decode(String.self, forKey: .identifier)),
            trigger: trigger, attempt: try c.decode(Int.self, forKey: .attempt),
            wakeID: try c.decodeIfPresent(String.self, forKey: .wakeID),
            payload: try c.decodeIfPresent(String.self, forKey: .payload),
            queued: queued,
            budget: TimeSpan(microseconds: try c.decodeIfPresent(UInt64.self, forKey: .budget) ?? .max),
            cancelGrace: TimeSpan(microseconds: try c.decodeIfPresent(UInt64.self, forKey: .cancelGrace) ?? .max),
            inProcess: try c.decodeIfPresent(Bool.self, forKey: .inProcess) ?? false)
        previousAttemptID = try c.decodeIfPresent(String.self, forKey: .previousAttemptID)
        scheduledRealtime = try c.decodeIfPresent(UInt64.self, forKey: .scheduledRealtime) ?? 0
        started = try Self.reading(c, .started)
        blocksSleep = try c.decodeIfPresent(Bool.self, forKey: .blocksSleep) ?? false
        cancelAt = try c.decodeIfPresent(UInt64.self, forKey: .cancelAt) ?? .max
        killAt = try c.decodeIfPresent(UInt64.self, forKey: .killAt) ?? .max
        phase = try Self.phase(c)
        fenced = try c.decodeIfPresent(Bool.self, forKey: .fenced) ?? false
        records = try c.decodeIfPresent([String].self, forKey: .records) ?? []
        if let at = try c.decodeIfPresent(UInt64.self, forKey: .progressReportedAt) {
            progress = RunProgress(
                completed: try c.decodeIfPresent(Int64.self, forKey: .progressCompleted),
                total: try c.decodeIfPresent(Int64.self, forKey: .progressTotal),
                status: try c.decodeIfPresent(String.self, forKey: .progressStatus), reportedAt: at)
        }
        progressTimeout = try c.decodeIfPresent(UInt64.self, forKey: .progressTimeout) ?? 0
        progressToldAt = try c.decodeIfPresent(UInt64.self, forKey: .progressToldAt)
        progressUntold = try c.decodeIfPresent(Bool.self, forKey: .progressUntold) ?? false
        fleetHost = try c.decodeIfPresent(String.self, forKey: .fleetHost)
        fenceToken = try c.decodeIfPresent(UInt64.self, forKey: .fenceToken)
        try decodeEnd(c)
    }

    /// The keys added with the run document: the end, and what a run waits for.
    private mutating func decodeEnd(_ c: KeyedDecodingContainer<CodingKeys>) throws {
        if let word = try c.decodeIfPresent(String.self, forKey: .outcome) {
            guard let outcome = RunOutcome(rawValue: word) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .outcome, in: c, debugDescription: "unknown outcome \(word)")
            }
            self.outcome = outcome
        }
        termination = try c.decodeIfPresent(Termination.self, forKey: .termination)
        ended = try Self.reading(c, .ended)
        result = try c.decodeIfPresent(String.self, forKey: .result)
        checkpoint = try c.decodeIfPresent(String.self, forKey: .checkpoint)
        checkpointRunID = try c.decodeIfPresent(String.self, forKey: .checkpointRunID)
        waitingFor = try c.decodeIfPresent([TaskCondition].self, forKey: .waitingFor) ?? []
        group = try c.decodeIfPresent(String.self, forKey: .group)
        waitingForGroup = try c.decodeIfPresent(Bool.self, forKey: .waitingForGroup) ?? false
        after = try c.decodeIfPresent([String].self, forKey: .after) ?? []
        lostConditions = try c.decodeIfPresent([TaskCondition].self, forKey: .lostConditions) ?? []
        partial = try c.decodeIfPresent(Bool.self, forKey: .partial) ?? false
        usage = try c.decodeIfPresent(RunUsage.self, forKey: .usage)
    }

    /// `value`, or nil for `UInt64.max` (and anything above `Int64.max`, which JSON cannot hold).
    private static func finite(_ value: UInt64) -> UInt64? { value <= UInt64(Int64.max) ? value : nil }

    /// The reading at `key` (`[monotonic, realtime]`), nil if there is none.
    private static func reading(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> ClockReading? {
        guard let pair = try c.decodeIfPresent([UInt64].self, forKey: key) else { return nil }
        guard pair.count == 2 else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: c, debugDescription: "expected [monotonic, realtime]")
        }
        return ClockReading(monotonic: pair[0], realtime: pair[1])
    }

    /// The phase from its word and `reason`.
    private static func phase(_ c: KeyedDecodingContainer<CodingKeys>) throws -> RunPhase {
        let word = try c.decode(String.self, forKey: .phase)
        let reason = try c.decodeIfPresent(String.self, forKey: .reason).flatMap(CancelReason.init(rawValue:))
        switch (word, reason) {
        case ("queued", _): return .queued
        case ("running", _): return .running
        case ("cancelling", let r?): return .cancelling(r)
        case ("killed", let r?): return .killed(r)
        default:
            throw DecodingError.dataCorruptedError(forKey: .phase, in: c, debugDescription: "unknown phase or reason")
        }
    }
}

extension RunPhase {
    /// `queued`, `running`, `cancelling` or `killed`, as the run document writes the phase.
    fileprivate var word: String {
        switch self {
        case .queued: return "queued"
        case .running: return "running"
        case .cancelling: return "cancelling"
        case .killed: return "killed"
        }
    }
}

extension ClockReading {
    /// `[monotonic, realtime]`, as the run document writes a reading.
    fileprivate var pair: [UInt64] { [monotonic, realtime] }
}
