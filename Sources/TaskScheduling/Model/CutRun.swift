/// A run an upgrade or a restart cut short, as the next image of taskd runs it again (trigger
/// `resume`, the same attempt, wake id and payload): the run as it was cut, as its document.
public struct CutRun: Hashable, Sendable, Codable {
    /// The run cut short.
    public var run: Run

    public init(_ run: Run) { self.run = run }

    public var key: TaskKey { run.key }
    public var attempt: Int { run.attempt }
    public var wakeID: String? { run.wakeID }
    public var payload: String? { run.payload }
    public var runID: String { run.id }
    /// When its trigger was due (CLOCK_REALTIME µs).
    public var scheduledRealtime: UInt64 { run.scheduledRealtime }

    /// The form of a cut run before the run document: `runID` for the document's `id`, and only
    /// the fields the replay reads.
    private enum LegacyKeys: String, CodingKey {
        case runID, kind, identifier, attempt, wakeID, payload, scheduledRealtime
    }

    /// The run document, and `runID` beside `id`, so that a taskd from before the document reads it.
    public func encode(to encoder: any Encoder) throws {
        try run.encode(to: encoder)
        var legacy = encoder.container(keyedBy: LegacyKeys.self)
        try legacy.encode(run.id, forKey: .runID)
    }

    /// Reads the run document, or the form before it (no `id`: the fields the replay reads, the
    /// rest of the run as `Run.init` leaves it, trigger `resume`, queued at instant 0).
    public init(from decoder: any Decoder) throws {
        let document = try decoder.container(keyedBy: Run.CodingKeys.self)
        guard !document.contains(.id) else {
            run = try Run(from: decoder)
            return
        }
        let c = try decoder.container(keyedBy: LegacyKeys.self)
        run = Run(
            id: try c.decode(String.self, forKey: .runID),
            key: TaskKey(
                kind: try c.decode(String.self, forKey: .kind),
                identifier: try c.decode(String.self, forKey: .identifier)),
            trigger: .resume, attempt: try c.decode(Int.self, forKey: .attempt),
            wakeID: try c.decodeIfPresent(String.self, forKey: .wakeID),
            payload: try c.decodeIfPresent(String.self, forKey: .payload),
            queued: ClockReading(monotonic: 0, realtime: 0), budget: .infinity, cancelGrace: .infinity, inProcess: false
        )
        run.scheduledRealtime = try c.decode(UInt64.self, forKey: .scheduledRealtime)
    }
}
