/// Where a run stands, as clients see it (`RunInfo.state`): a phase while it lives, its outcome once it ended.
public enum RunState: String, Hashable, Sendable, CaseIterable {
    case queued, running, cancelling, killing
    case completed, failed, cancelled, expired, killed

    /// The run's outcome, once it ended.
    public var outcome: RunOutcome? { RunOutcome(rawValue: rawValue) }

    /// True once the run has an outcome.
    public var hasEnded: Bool { outcome != nil }
}
