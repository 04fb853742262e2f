/// What the next run of a task starts from when an earlier one was cut short (`ResumeFrom=`).
public enum ResumePolicy: String, Hashable, Sendable, CaseIterable {
    /// From the last checkpoint its handler kept (`context.checkpoint`, `CHECKPOINT=`), if any:
    /// the Swift handler's `context.resumeState`, the command's `TASKD_CHECKPOINT`.
    case checkpoint
    /// From the start: the last checkpoint is kept and shown, never handed to a run.
    case start
}
