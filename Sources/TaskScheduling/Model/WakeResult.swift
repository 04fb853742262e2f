/// The answer to a trigger for one task: the run it started, queued, or joined.
public struct WakeResult: Hashable, Sendable {
    public var run: Run
    public var disposition: WakeDisposition

    public init(run: Run, disposition: WakeDisposition) {
        self.run = run
        self.disposition = disposition
    }

    /// True when the trigger joined a run that already existed (coalesced or overflow).
    public var coalesced: Bool { disposition == .coalesced || disposition == .overflow }
}
