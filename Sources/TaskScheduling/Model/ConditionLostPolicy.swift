/// `ConditionLost=`: what happens to a run in progress when one of its task's conditions stops
/// holding.
public enum ConditionLostPolicy: String, Hashable, Sendable {
    /// Cancelled as at its budget (`KillSignal=`, Swift cancellation, the hard stop one grace
    /// later); outcome `cancelled`, reason `condition-lost`.
    case cancel
    /// Left to finish.
    case `continue`
}
