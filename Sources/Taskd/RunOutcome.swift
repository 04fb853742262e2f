import TaskScheduling

/// How a run ended: `.completed`, `.failed`, `.cancelled`, `.expired` or `.killed` (the journal's
/// `TASK_OUTCOME`, the strings on the wire).
public typealias RunOutcome = TaskScheduling.RunOutcome
