/// The `FleetClaim` type of the IDL: a claim held in etcd now, a `Fleet=once` slot's or a
/// `Fleet=max:N` place's.
public struct FleetClaimInfo: Codable, Hashable, Sendable {
    /// The task, as `kind:identifier`.
    public var task: String
    /// `once` or `max`.
    public var mode: String
    /// For `once`: the slot's nominal time (CLOCK_REALTIME µs).
    public var slotUSec: UInt64?
    /// For `max`: the run that holds or waits for the place.
    public var runId: String?
    public var host: String
    /// The claim's fence token: the etcd revision that created it.
    public var fenceToken: UInt64

    public init(task: String, mode: String, slotUSec: UInt64?, runId: String?, host: String, fenceToken: UInt64) {
        self.task = task
        self.mode = mode
        self.slotUSec = slotUSec
        self.runId = runId
        self.host = host
        self.fenceToken = fenceToken
    }
}
