import TaskScheduling
import TaskdDaemon

// The model's types an app names, under public names (`Taskd` does not re-export the modules they
// come from).

/// What a trigger does while the task's run is in progress (`Overlap=`): coalesce into it, queue
/// behind it, or replace it. The one scheduling type an app names when it registers a task.
public typealias OverlapPolicy = TaskScheduling.OverlapPolicy

/// What timer elapses missed during downtime or sleep make (`CatchUp=`): none, the latest, or all.
public typealias CatchUpPolicy = TaskScheduling.CatchUpPolicy

/// What a run of a `fleet:` `.once` or `.max(n)` task does when etcd cannot be reached to claim it
/// (`FleetUnavailable=`): `.skip` (the default), `.local` or `.wait` (for `.giveUpAfter`, if given).
public typealias FleetUnavailablePolicy = TaskScheduling.FleetUnavailablePolicy

/// Where a task runs when several hosts share it (`fleet:`, `Fleet=`): `.host` (each host), `.once`
/// (one host of the fleet per calendar slot) or `.max(n)` (at most n hosts at a time), coordinated
/// through etcd (`[Daemon] FleetEndpoints=`).
public typealias TaskFleet = TaskScheduling.FleetMode

/// A resource whose stall pressure a task may require to be low: `.cpu`, `.memory`, `.io`.
public typealias PressureResource = TaskScheduling.PressureResource

/// The kernel's pressure average a pressure requirement reads: `.tenSeconds`, `.oneMinute`, `.fiveMinutes`.
public typealias PressureWindow = TaskScheduling.PressureWindow

/// What started a run: `.startup`, `.timer`, `.wake`, `.retry`, `.catchup` or `.resume`
/// (a command's `TASKD_TRIGGER`).
public typealias TaskTrigger = TaskScheduling.Trigger

/// How a run ended: `.completed`, `.failed`, `.cancelled`, `.expired` or `.killed` (the journal's
/// `TASK_OUTCOME`, the strings on the wire).
public typealias RunOutcome = TaskScheduling.RunOutcome

/// Why a run was cancelled: `.budget`, `.requested`, `.sleep`, … (the journal's `TASK_CANCEL_REASON`).
public typealias CancelReason = TaskScheduling.CancelReason

/// Thrown by a Swift handler to fail its run and ask for no retry (a command exits with 100
/// instead). Any other error is retried per `MaxAttempts=`.
public typealias PermanentFailure = TaskdDaemon.PermanentFailure
