/// A run an upgrade or a restart cut short, as the next image of taskd runs it again (trigger
/// `resume`): its task, attempt, wake id and payload, and when it was first due.
public struct CutRun: Hashable, Sendable, Codable {
    public var kind: String
    public var identifier: String
    public var attempt: Int
    public var wakeID: String?
    public var payload: String?
    /// The run cut short.
    public var runID: String
    /// When its trigger was due (CLOCK_REALTIME µs).
    public var scheduledRealtime: UInt64

    public init(_ run: Run) {
        kind = run.key.kind
        identifier = run.key.identifier
        attempt = run.attempt
        wakeID = run.wakeID
        payload = run.payload
        runID = run.id
        scheduledRealtime = run.scheduledRealtime
    }

    public var key: TaskKey { TaskKey(kind: kind, identifier: identifier) }
}
