/// What a running Swift handler may ask of taskd about its task, through its `TaskContext`.
package struct RunControls: Sendable {
    /// Asks for the task's next run this long from now (replacing an earlier request).
    package var scheduleNext: @Sendable (Duration) -> Void

    package init(scheduleNext: @escaping @Sendable (Duration) -> Void) {
        self.scheduleNext = scheduleNext
    }

    /// Controls that do nothing: a context made by hand.
    package static let none = RunControls(scheduleNext: { _ in })
}
