/// What a running Swift handler may tell taskd about its run and ask of it, through its `TaskContext`.
package struct RunControls: Sendable {
    /// Asks for the task's next run this long from now (replacing an earlier request).
    package var scheduleNext: @Sendable (Duration) -> Void
    /// Reports progress: units done, of how many (nil: unknown).
    package var progress: @Sendable (Int64, Int64?) -> Void
    /// Reports a line of status.
    package var status: @Sendable (String) -> Void

    package init(
        scheduleNext: @escaping @Sendable (Duration) -> Void = { _ in },
        progress: @escaping @Sendable (Int64, Int64?) -> Void = { _, _ in },
        status: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.scheduleNext = scheduleNext
        self.progress = progress
        self.status = status
    }

    /// Controls that do nothing: a context made by hand.
    package static let none = RunControls()
}
