/// The `io.taskd.Scheduler` Varlink interface: its name, its errors, and its IDL, written here
/// only (`GetInterfaceDescription` returns it; docs/control-protocol.md describes it). Each method
/// is a `VarlinkMethod` beside it (`SchedulerInterface.Wake`, …) with its parameters and reply.
public enum SchedulerInterface {
    public static let name = "io.taskd.Scheduler"

    public static let noSuchTask = name + ".NoSuchTask"
    public static let ambiguousTarget = name + ".AmbiguousTarget"
    public static let permissionDenied = name + ".PermissionDenied"
    public static let shuttingDown = name + ".ShuttingDown"
    public static let invalidRequest = name + ".InvalidRequest"
    public static let invalidConfiguration = name + ".InvalidConfiguration"
    public static let tooManyConnections = name + ".TooManyConnections"
    public static let upgradeFailed = name + ".UpgradeFailed"
    public static let noSuchRun = name + ".NoSuchRun"
    public static let fleetUnavailable = name + ".FleetUnavailable"

    /// The IDL as `org.varlink.service.GetInterfaceDescription` returns it.
    public static let description = """
        # taskd: wake, list, inspect and cancel background tasks (the iOS background-task model on Linux).
        interface io.taskd.Scheduler

        # One run of a task, as it is now or as it ended. Times are CLOCK_REALTIME microseconds.
        type RunInfo (
          # The task's name (its identifier).
          task: string,
          kind: string,
          # 32 hex digits, unique per run; journaled as TASK_RUN_ID.
          runId: string,
          # startup, timer, wake, retry, catchup, resume (a run sleep, an upgrade or a restart cut short,
          # again) or takeover (a fleet slot its holder left undone).
          trigger: string,
          # 1, then 2, 3, ... for retries.
          attempt: int,
          # queued, running, cancelling, killing, or the outcome: completed, failed, cancelled, expired, killed.
          state: string,
          # What the wake did for this task: started, coalesced (joined the run in progress), queued (waits
          # behind it, Overlap=queue, or a payload unlike the run's), overflow (the queue was full: joined
          # the last queued run), refused (the queue was full and the payload differs from the last
          # queued run's: not run; the run is the one it would have joined), skipped (a run was in
          # progress and the task has Overlap=skip: not run; the run is the one in progress) or paused
          # (the task is paused: recorded as a run that ended at once, not run).
          disposition: string,
          # True when disposition is coalesced or overflow.
          coalesced: bool,
          wakeId: ?string,
          # When the trigger created the run.
          queuedUSec: int,
          # When the trigger was due: a timer's nominal elapse (a missed calendar time for catchup;
          # before the random delay), a retry's due time, a wake's acknowledgement.
          scheduledUSec: ?int,
          # When its handler started; the budget counts from here.
          startedUSec: ?int,
          deadlineUSec: ?int,
          budgetUSec: int,
          # How long it waited for a free slot (MaxConcurrentRuns=) or behind another run.
          waitedUSec: ?int,
          endedUSec: ?int,
          durationUSec: ?int,
          exitStatus: ?int,
          # The signal that ended a command, as SIGKILL.
          signal: ?string,
          # budget, requested, superseded, reconfigured, removed, shutdown, no-progress,
          # condition-timeout (MaxDeferSec=), condition-lost (ConditionLost=cancel), sleep, paused, upgrade or restart.
          cancelReason: ?string,
          # What a Swift handler threw, or why a command could not start.
          error: ?string,
          # True for a run detached by a cancel: what its handler reported later is not the task's result.
          stale: bool,
          # What a Swift handler returned (its Encodable result).
          result: ?object,
          # What a queued run waits for before it starts (RequireACPower= ...): "on AC power".
          waitingFor: ?string,
          # The failed run this one retries (or does the work of in place of its retry).
          previousRunId: ?string,
          # On a failed run a Wake with more follows: its next attempt starts this long after its end;
          # the following replies follow that attempt (unless followRetries is false).
          retryInUSec: ?int,
          # True when the handler ended by itself, successfully, after its cancellation: done
          # partially, and not retried.
          partial: ?bool,
          # What the handler last reported: units done, of how many, and a line of status.
          progressCompleted: ?int,
          progressTotal: ?int,
          status: ?string,
          # Why a failed run failed beyond its exit: oom (its cgroup's MemoryMax=), or lost (taskd stopped
          # unexpectedly while it ran, and recorded it at its next start).
          failureReason: ?string,
          # A fleet task's run (Fleet=once, max:N): the host that held or ran its slot, and that
          # claim's fence token (an etcd revision: a later claim of the slot has a larger one).
          fleetHost: ?string,
          fenceToken: ?int,
          # What a command's run used: CPU time, peak memory, bytes read and written.
          cpuUSec: ?int,
          memoryPeakBytes: ?int,
          ioReadBytes: ?int,
          ioWriteBytes: ?int
        )

        # A task, its runs and its schedule.
        type TaskInfo (
          name: string,
          kind: string,
          description: string,
          # command or swift.
          handler: string,
          budgetUSec: int,
          cancelGraceUSec: int,
          # coalesce, queue, replace, skip or allow.
          overlap: string,
          maxAttempts: int,
          # The run in progress (running, or queued for a free slot).
          current: ?RunInfo,
          # Runs waiting behind it (Overlap=queue), oldest first.
          queue: []RunInfo,
          # The other runs in progress beside it (Overlap=allow), oldest first.
          instances: ?[]RunInfo,
          # A retry waiting for its backoff: the attempt it will be, and when.
          retryAttempt: ?int,
          retryDueUSec: ?int,
          # The last run that is the task's own result (never a stale one).
          last: ?RunInfo,
          # The last five runs, the last to end first.
          recent: []RunInfo,
          # When a timer of the task elapses next.
          nextElapseUSec: ?int,
          lastTriggerUSec: ?int,
          # The end of its last completed run, the runs that failed in a row since, and whether no run
          # completed for ExpectSuccessWithinSec=.
          lastSuccessUSec: ?int,
          consecutiveFailures: ?int,
          overdue: ?bool,
          # Paused (taskctl pause, PauseAfterFailures=): its timers and wakes are recorded, not run.
          paused: ?bool,
          pausedSinceUSec: ?int,
          pausedUntilUSec: ?int,
          pauseNote: ?string,
          # Fleet= when hosts share the task: once or max:N (none: host).
          fleet: ?string,
          # The checkpoint kept for the next run (context.checkpoint, CHECKPOINT=): its size, the run that
          # kept it and when; resumeFrom is ResumeFrom= (checkpoint or start).
          checkpointBytes: ?int,
          checkpointRunId: ?string,
          checkpointUSec: ?int,
          resumeFrom: ?string
        )

        # Starts a run of every task the target names (a name, a kind, or kind:identifier), or joins, queues
        # behind or replaces the run in progress, by the task's Overlap= policy. The id is SwiftUI's task(id:):
        # the same id as the run in progress joins it, another id cancels it (superseded) and starts anew.
        # The payload reaches the handler (a command reads it on standard input). The reply comes once the
        # wake is on disk: an acknowledged wake runs even if taskd crashes first. It tells each run as it is
        # then, but an end only once the history holding it is on disk (a run that ended meanwhile is told
        # as acknowledged). With "more": true a reply follows every state change until all runs have ended,
        # a run that failed and will be retried followed by its retry (unless followRetries is false).
        method Wake(target: string, id: ?string, payload: ?object, followRetries: ?bool) -> (runs: []RunInfo)

        # Every task, sorted by name.
        method List() -> (tasks: []TaskInfo)

        # One task: a name or kind:identifier.
        method Status(name: string) -> (task: TaskInfo)

        # Runs by id, as they are now (an ended run as its history recorded it); with "more", each
        # later state too, as Wake with "more" tells them. A client following runs resumes with it when
        # an upgrade in place closed its connection. NoSuchRun if an id names no run taskd knows.
        method Follow(runIds: []string, followRetries: ?bool) -> (runs: []RunInfo)

        # The task's last runs, the last to end first (at most limit, default 20; History= sets how many are kept).
        method History(name: string, limit: ?int) -> (runs: []RunInfo)

        # Cancels one run (target is its runId), or the run in progress, the queued runs and the pending
        # retry of every task the target names; returns the runs signalled or ended. A submitted task
        # it names is withdrawn too: it will not run again.
        method Cancel(target: string) -> (runs: []RunInfo)

        # Adds a transient task of kind submitted that runs command (no shell) once: now, at atUSec
        # (CLOCK_REALTIME) or inUSec from now; or on calendar (OnCalendar=) for as long as it has elapses.
        # It is persisted (a time passed while taskd was down runs at its start), listed, and removed
        # once it has run for the last time, or by Cancel. properties are task-file settings, Key=Value
        # each; InvalidRequest names the one that is wrong. The command runs as the caller (a
        # caller other than root never as another user); SubmitUsers=/SubmitGroups= say who may submit.
        method Submit(command: []string, name: ?string, atUSec: ?int, inUSec: ?int, calendar: ?string, properties: ?[]string) -> (task: TaskInfo)

        # Loads the configuration again. If it is invalid nothing changes (InvalidConfiguration). Otherwise
        # added tasks are scheduled, removed tasks' runs cancelled (removed), changed tasks' runs cancelled
        # and started again under the new definition (reconfigured); unchanged tasks are not touched.
        method Reload() -> (added: []string, removed: []string, changed: []string, unchanged: int)

        # Pauses every task the target names: its timers and wakes are recorded (a run that ends at once,
        # cancelled, reason paused) but not run, until Resume or untilUSec (CLOCK_REALTIME). Kept across
        # restarts. Returns the tasks paused, as kind:identifier.
        method Pause(target: string, untilUSec: ?int, note: ?string) -> (tasks: []string)

        # Resumes every paused task the target names; returns those resumed.
        method Resume(target: string) -> (tasks: []string)

        # Drains taskd before a restart or an upgrade: no new run starts (timers, wakes and retries
        # that come meanwhile wait, as for a free slot, and acknowledged wakes stay on disk); replies
        # once no run is active, or after timeoutUSec with drained false and the runs still active.
        # The drain lasts until EndDrain or until taskd stops. Only root or taskd's own user.
        method Drain(timeoutUSec: ?int) -> (drained: bool, runs: []RunInfo)

        # Ends a drain: the runs that waited start, as slots allow; returns how many waited.
        method EndDrain() -> (waiting: int)

        # Re-executes the binary now at taskd's path, keeping its PID: the command runs in progress go
        # on (their pipes and cgroups handed over, their budgets keeping their deadlines), Swift
        # handlers' runs are cancelled (reason upgrade) and run again, calls made meanwhile wait in the
        # socket's backlog. The new binary's --check-config must pass first (UpgradeFailed otherwise).
        # Replies just before the execve. Only root or taskd's own user.
        method Upgrade() -> (previousVersion: string, version: string, runs: int)

        # One reason a task runs, waits or does not run now. code: stopping, sleeping, draining, paused, running,
        # waiting-for-conditions, waiting-for-slot, waiting-for-group, waiting-for-order, queued-behind, joins-run, replaces-run, skips-trigger, runs-beside, retry-pending,
        # next-timer, wake-only, overdue, failing (alerted), failures, last-refusal, last-result, fleet,
        # claim-pending or fleet-unavailable;
        # messageId: the journal MESSAGE_ID of the entries behind it, where there are some.
        type WhyReason (
          code: string,
          text: string,
          runId: ?string,
          atUSec: ?int,
          messageId: ?string
        )

        # What decides, now, whether a task runs: the most decisive reason first.
        method Why(name: string) -> (task: string, reasons: []WhyReason)

        # The metrics of every task and of taskd, in the OpenMetrics text format.
        method Metrics() -> (text: string)

        # A claim held in etcd now: a Fleet=once slot's (mode once, slotUSec: its nominal time) or a
        # Fleet=max:N place's (mode max, runId: the run that holds or waits for it). task is
        # kind:identifier; fenceToken is the etcd revision that created the claim.
        type FleetClaim (
          task: string,
          mode: string,
          slotUSec: ?int,
          runId: ?string,
          host: string,
          fenceToken: int
        )

        # The fleet as etcd has it now: FleetName=, this host's FleetHost=, the hosts that hold a
        # lease and the claims they hold, oldest first. Without FleetEndpoints=, no name and no host.
        method Fleet() -> (name: ?string, host: ?string, hosts: []string, claims: []FleetClaim)

        # The target names no task; known lists every task as kind:identifier.
        error NoSuchTask (target: string, known: []string)

        # The target names several tasks where one is required.
        error AmbiguousTarget (target: string, matches: []string)

        # The caller may not do this.
        error PermissionDenied (reason: string)

        # No run in progress, and none in any task's history, has this id.
        error NoSuchRun (runId: string)

        # The daemon is stopping and starts no new runs.
        error ShuttingDown ()

        # The request was not valid Varlink: not JSON, too large, not a call object, or
        # not completed within RequestTimeoutSec=.
        error InvalidRequest (reason: string)

        # The connection was refused: too many are open (MaxConnections=, MaxConnectionsPerUser=).
        # It answers the connection's first call; the connection is then closed.
        error TooManyConnections (reason: string)

        # Reload found errors in the configuration, each as file:line: message; nothing was changed.
        error InvalidConfiguration (errors: []string)

        # The upgrade did not happen (the new binary failed its check, or could not be executed);
        # taskd goes on as it was.
        error UpgradeFailed (reason: string)

        # etcd could not be reached, or refused (Fleet).
        error FleetUnavailable (reason: string)
        """
}
