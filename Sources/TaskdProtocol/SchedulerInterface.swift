/// The `io.taskd.Scheduler` Varlink interface: its name, IDL text, methods and errors.
/// `io.taskd.Scheduler.varlink` beside this file holds the same text; a test keeps them equal.
public enum SchedulerInterface {
    public static let name = "io.taskd.Scheduler"

    public static let wake = name + ".Wake"
    public static let list = name + ".List"
    public static let status = name + ".Status"
    public static let cancel = name + ".Cancel"

    public static let noSuchTask = name + ".NoSuchTask"
    public static let ambiguousTarget = name + ".AmbiguousTarget"
    public static let permissionDenied = name + ".PermissionDenied"
    public static let shuttingDown = name + ".ShuttingDown"
    public static let invalidRequest = name + ".InvalidRequest"

    /// The IDL as `org.varlink.service.GetInterfaceDescription` returns it.
    public static let description = """
        # taskd: wake, list, inspect and cancel background tasks (the iOS background-task model on Linux).
        interface io.taskd.Scheduler

        # One run of a task, as it is now. Times are CLOCK_REALTIME microseconds.
        type RunInfo (
          # The task's name (its identifier).
          task: string,
          kind: string,
          # 32 hex digits, unique per run; journaled as TASK_RUN_ID.
          runId: string,
          # startup, timer, wake, retry or catchup.
          trigger: string,
          attempt: int,
          # running, cancelling, killing, or the outcome: completed, failed, cancelled, expired, killed.
          state: string,
          # True when this trigger joined a run that was already in progress.
          coalesced: bool,
          wakeId: ?string,
          startedUSec: int,
          deadlineUSec: int,
          budgetUSec: int,
          durationUSec: ?int,
          exitStatus: ?int,
          # The signal that ended a command, as SIGKILL.
          signal: ?string,
          # budget, requested, superseded, reconfigured, removed or shutdown.
          cancelReason: ?string,
          # What a Swift handler threw, or why a command could not start.
          error: ?string
        )

        # A task and its schedule.
        type TaskInfo (
          name: string,
          kind: string,
          description: string,
          # command or swift.
          handler: string,
          budgetUSec: int,
          cancelGraceUSec: int,
          # The run in progress.
          current: ?RunInfo,
          # The last run that ended.
          last: ?RunInfo,
          # When a timer of the task elapses next.
          nextElapseUSec: ?int,
          lastTriggerUSec: ?int
        )

        # Starts a run of every task the target names (a name, a kind, or kind:identifier), or joins the
        # run in progress. The id is SwiftUI's task(id:); the payload reaches the handler (a command reads it
        # on standard input). With "more": true a reply follows every state change until all runs have ended.
        method Wake(target: string, id: ?string, payload: ?object) -> (runs: []RunInfo)

        # Every task, sorted by name.
        method List() -> (tasks: []TaskInfo)

        # One task: a name or kind:identifier.
        method Status(name: string) -> (task: TaskInfo)

        # Cancels the runs in progress of every task the target names; returns the runs signalled.
        method Cancel(target: string) -> (runs: []RunInfo)

        # The target names no task; known lists every task as kind:identifier.
        error NoSuchTask (target: string, known: []string)

        # The target names several tasks where one is required.
        error AmbiguousTarget (target: string, matches: []string)

        # The caller may not do this.
        error PermissionDenied (reason: string)

        # The daemon is stopping and starts no new runs.
        error ShuttingDown ()

        # The request was not valid Varlink: not JSON, too large, or not a call object.
        error InvalidRequest (reason: string)
        """
}
