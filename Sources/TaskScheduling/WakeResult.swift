/// The answer to a trigger for one task: the run it started, or the run in progress it joined.
public struct WakeResult: Hashable, Sendable {
    public var run: Run
    /// True when the trigger joined a run already in progress (design §3, `coalesced`).
    public var coalesced: Bool
}
