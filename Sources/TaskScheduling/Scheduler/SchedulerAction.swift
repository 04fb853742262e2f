/// What the scheduler asks its driver to do; the driver performs these in order.
public enum SchedulerAction: Hashable, Sendable {
    /// Start the handler for this run.
    case start(Run)
    /// Signal cancellation: `KillSignal` to a command's group / cancel the Swift task.
    case cancel(Run)
    /// Hard stop: SIGKILL to a command's group / abandon the Swift task.
    case kill(Run)
    /// Report an event (to the journal, the task's history and clients watching the run).
    case report(SchedulerEvent)
    /// Keep the task's last trigger time (CLOCK_REALTIME µs) on disk: it has `Persistent=yes`.
    case persistTrigger(TaskKey, UInt64)
    /// Keep the run the task's handler asked for (CLOCK_REALTIME µs; nil: none any more) on disk.
    case persistRequest(TaskKey, UInt64?)
    /// These acknowledged wakes are answered (their run ended for good): forget their records.
    case settle([String])
    /// Journal something about a task as a whole (overdue, failing, paused, resumed, recovered).
    case alert(TaskAlert)
    /// Keep how the task has been doing on disk (last success, failures in a row, alerts, pause).
    case persistHealth(TaskKey, TaskHealth)
    /// Take this inhibitor lock (logind's `Inhibit`): `delay` before sleep, `block` while a `Sleep=block` run is active.
    case inhibit(SleepInhibitor)
    /// Release this inhibitor lock.
    case release(SleepInhibitor)

    /// An empty batch with room for a trigger's or an end's few actions (a start, its reports,
    /// a persist): the scheduler's hot paths append to it with no regrowth.
    static func batch() -> [SchedulerAction] {
        var actions: [SchedulerAction] = []
        actions.reserveCapacity(6)
        return actions
    }
}
