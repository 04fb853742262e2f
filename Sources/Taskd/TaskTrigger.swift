import TaskScheduling

/// What started a run: `.startup`, `.timer`, `.wake`, `.retry`, `.catchup` or `.resume`
/// (a command's `TASKD_TRIGGER`).
public typealias TaskTrigger = TaskScheduling.Trigger
