import TaskScheduling

/// Why a run was cancelled: `.budget`, `.requested`, `.sleep`, … (the journal's `TASK_CANCEL_REASON`).
public typealias CancelReason = TaskScheduling.CancelReason
