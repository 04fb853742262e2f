/// Requests the daemon refuses for a reason other than the target.
enum DaemonError: Error, Sendable {
    /// The daemon is stopping and starts no new runs.
    case shuttingDown
    /// The peer may not do this; the reason names the rule.
    case permissionDenied(String)
    /// No run in progress or in a history has this id.
    case noSuchRun(String)
    /// The request cannot be done as asked; the reason says why.
    case invalidRequest(String)
}
