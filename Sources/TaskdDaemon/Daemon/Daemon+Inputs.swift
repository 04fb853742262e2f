import TaskScheduling
import TaskdConfig
import TaskdProtocol

/// What the daemon learns from handlers and clocks: ends, progress and checkpoints of runs,
/// requests for a next run, and clock changes (the machine's changes go to `MachineLink`).
extension Daemon {
    // MARK: Handlers

    func handlerEnded(runID: String, termination: Termination, result: String? = nil, usage: RunUsage? = nil) {
        // An abandoned Swift task finished after all: fenced, never recorded as the task's result;
        // a retry that waits for it may start now.
        if scheduler.runs[runID] == nil { journal.lateResult(runID) }
        perform(
            scheduler.handlerEnded(
                runID: runID, termination: termination, result: result, usage: usage, at: clock.now()))
    }

    /// A Swift handler's latest progress report (`ProgressMailbox`), or a command's
    /// `PROGRESS=`/`STATUS=` line.
    func progressReported(runID: String, _ report: ProgressMailbox.Report?) {
        guard let report else { return }
        if let checkpoint = report.checkpoint { checkpointed(runID: runID, checkpoint) }
        if let result = report.result { scheduler.recordResult(runID: runID, result) }
        if report.completed == nil && report.total == nil && report.status == nil { return }
        perform(
            scheduler.progress(
                runID: runID, completed: report.completed, total: report.total, status: report.status,
                at: clock.now()))
    }

    /// A handler asked for its task's next run `delay` from now (`TaskContext.scheduleNext(after:)`).
    func requestRun(_ key: TaskKey, after delay: Duration) {
        let micros = TaskHandler.microseconds(delay)
        let now = clock.now()
        journal.runRequested(key, in: micros, at: now)
        perform(scheduler.requestRun(key, after: micros, at: now))
    }

    /// Run `runID` keeps `value` as its task's checkpoint (`RunHistory.checkpoint`).
    func checkpointed(runID: String, _ value: String, done: (@Sendable (String?) -> Void)? = nil) {
        history.checkpoint(
            value, of: runID, run: scheduler.runs[runID], at: clock.now(), journal: journal, done: done)
    }

    /// The checkpoint kept for the task `name` (a name or kind:identifier), if any.
    package func keptCheckpoint(_ name: String) throws -> TaskCheckpoint? {
        try history.records[scheduler.resolver.resolveOne(name)]?.checkpoint
    }

    // MARK: Clocks

    /// The wall clock was set or the local time zone changed: re-arm calendar timers and journal it.
    package func clockChanged(zone: Bool = false) {
        if zone { TimeZoneContext.localZoneChanged() }
        let now = clock.now()
        let tasks = scheduler.clockChanged(at: now)
        let what = zone ? "local time zone changed" : "wall clock changed"
        journal.daemon(
            .clockChanged, 5,
            "\(what) (now \(Timestamp.format(now.realtime))); re-armed calendar timers"
                + (tasks.isEmpty ? "" : " of " + tasks.joined(separator: ", ")))
        afterChange(rearm: true)
    }
}
