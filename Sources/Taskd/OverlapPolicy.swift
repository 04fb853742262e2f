import TaskScheduling

/// What a trigger does while the task's run is in progress (`Overlap=`): coalesce into it, queue
/// behind it, or replace it. The one scheduling type an app names when it registers a task.
public typealias OverlapPolicy = TaskScheduling.OverlapPolicy
