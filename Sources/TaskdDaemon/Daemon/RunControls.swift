/// What a running Swift handler may tell taskd about its run and ask of it, through its
/// `TaskContext`: the daemon's `SwiftRunControls`, `TaskdTesting`'s own, or none for a context
/// made by hand.
package protocol RunControls: Sendable {
    /// Asks for the task's next run this long from now (replacing an earlier request).
    func scheduleNext(_ delay: Duration)
    /// Reports progress: units done, of how many (nil: unknown).
    func progress(completed: Int64, total: Int64?)
    /// Reports a line of status.
    func status(_ text: String)
    /// Keeps `value` (JSON text) as the task's checkpoint: nil once it is on disk, else why not.
    func checkpoint(_ value: String) async -> String?
    /// The daemon's clock, on which the handler's deadline and `now` are read.
    var clock: any DaemonClock { get }
}

/// Controls that do nothing: a context made by hand.
package struct NoRunControls: RunControls {
    package init() {}
    package func scheduleNext(_ delay: Duration) {}
    package func progress(completed: Int64, total: Int64?) {}
    package func status(_ text: String) {}
    package func checkpoint(_ value: String) async -> String? { nil }
    package var clock: any DaemonClock { SystemClock() }
}
