/// How a run ended (docs/run-life.md, "States and outcomes").
public enum RunOutcome: String, Hashable, Sendable, CaseIterable {
    /// The closure returned / the command exited 0.
    case completed
    /// It threw, exited non-zero, crashed by a signal or could not start.
    case failed
    /// `taskctl cancel`, supersession, reload or shutdown; the reason is recorded.
    case cancelled
    /// The budget's cancellation came and the handler ended before the budget's end.
    case expired
    /// Still running at the budget's end: SIGKILL to the process group / the Swift task abandoned.
    case killed
}
