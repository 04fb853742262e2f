import TaskScheduling
import TaskdConfig
import TaskdMachine

/// What the daemon learns from handlers and the machine: ends and progress of runs, requests for a
/// next run, conditions that come to hold or stop holding, system sleep, and clock changes.
extension Daemon {
    // MARK: Handlers

    func handlerEnded(runID: String, termination: Termination, result: String? = nil, usage: RunUsage? = nil) {
        if scheduler.runs[runID] == nil {
            // An abandoned Swift task finished after all: fenced, never recorded as the task's result;
            // a retry that waits for it may start now.
            journal.daemon(
                .lateResult, 5, "run \(runID.prefix(8)) returned after it was abandoned; result ignored",
                [("TASK_RUN_ID", runID)])
        }
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
        journal.daemon(
            .runRequested, 6,
            "\(key.identifier): its handler asked for the next run in \(TimeSpan(microseconds: micros))",
            [
                ("TASK", key.identifier), ("TASK_KIND", key.kind),
                ("TASK_REQUESTED_USEC", String(now.realtime &+ micros)),
            ])
        perform(scheduler.requestRun(key, after: micros, at: now))
    }

    // MARK: Conditions

    /// Watches what the tasks' conditions need, and gives the scheduler what does not hold now.
    /// Without any, every condition holds.
    func watchConditions() {
        machine.watch(for: conditions.required)
        guard !conditions.required.isEmpty else {
            // A reload removed the last condition: nothing waits for one any more.
            if !conditions.unheld.isEmpty {
                conditions.unheld = []
                perform(scheduler.conditionsChanged(unheld: [], at: clock.now()))
            }
            return
        }
        applyConditions(always: true, source: machine.sourceNote)
    }

    /// Reads what holds now and, when it differs from what the scheduler knows (or `always`, as
    /// when the conditions in use changed), journals it and tells the scheduler.
    func applyConditions(always: Bool = false, source: String = "") {
        guard !conditions.required.isEmpty else { return }
        let now = machine.unheld(conditions.required)
        guard always || now != conditions.unheld else { return }
        conditions.unheld = now
        journal.daemon(
            .conditionsChanged, 6, "conditions: \(machine.summary)\(source)" + conditions.unmetText, conditions.fields)
        perform(scheduler.conditionsChanged(unheld: now, at: clock.now()))
    }

    /// Free space and pressure, read afresh before a trigger is decided when no run has them
    /// sampled: a reading from the last change could be hours old.
    func refreshSampled() {
        if conditions.sampled, !machine.isSampling { applyConditions() }
    }

    /// After actions: free space and pressure are sampled while a run needs them.
    func followMachine() {
        guard conditions.sampled else { return }
        machine.sample(
            scheduler.runs.values.contains { run in
                scheduler.tasks[run.key]?.definition.conditions.contains { $0.isSampled } ?? false
            })
    }

    /// Takes or releases an inhibitor lock, as the scheduler decided.
    func inhibit(_ lock: SleepInhibitor, hold: Bool) {
        // Before `start` (a run taken over that had already ended): applied once the machine is there.
        guard machine != nil else { return locksBeforeStart.append((lock, hold)) }
        machine.inhibit(lock, hold: hold)
        if lock == .delay, !hold, scheduler.isSleeping {
            journal.daemon(.systemSleeps, 6, "every run is stopped: the system may sleep")
        }
    }

    // MARK: Sleep and clocks

    /// The machine changed: conditions may hold or not now, or the system sleeps or woke up.
    func machineChanged(_ event: MachineEvent) {
        switch event {
        case .conditions:
            applyConditions()
        case .prepareForSleep:
            guard scheduler.watchesSleep else { return }
            let maxDelay = machine.inhibitDelayMax
            let actions = scheduler.prepareForSleep(maxDelay: maxDelay, at: clock.now())
            let cancelled = actions.filter { if case .cancel = $0 { true } else { false } }.count
            journal.daemon(
                .systemSleeps, 5,
                "the system is about to sleep: cancelling \(cancelled) run(s) within \(TimeSpan(microseconds: maxDelay))",
                [("TASKD_SLEEP_CANCELLED_RUNS", String(cancelled))])
            perform(actions)
        case .resumed:
            guard scheduler.isSleeping else { return }
            let cut = scheduler.cutBySleepCount
            journal.daemon(
                .systemResumed, 5,
                "the system resumed: catching up timers"
                    + (cut == 0 ? "" : "; running again \(cut) run(s) sleep cut short"))
            perform(scheduler.resumed(at: clock.now()))
            afterChange(rearm: true)
        }
    }

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

    /// `OnSuccess=`, `OnFailure=` and `OnOverdue=` name tasks: one that names none is said at load.
    /// Only tasks with such keys are looked at: a list of every task made after start-up's
    /// `malloc_trim` would stay resident as free heap (0.6 MiB at 10,000 tasks).
    static func checkChains(_ tasks: [TaskDefinition], resolver: TargetResolver, journal: EventJournal) {
        for d in tasks where !(d.onSuccess.isEmpty && d.onFailure.isEmpty && d.onOverdue.isEmpty) {
            for (name, targets) in [("OnSuccess", d.onSuccess), ("OnFailure", d.onFailure), ("OnOverdue", d.onOverdue)]
            {
                for target in targets where (try? resolver.resolve(target)) == nil {
                    journal.daemon(.configError, 4, "\(d.key): \(name)=\(target) names no task; it is skipped")
                }
            }
        }
    }
}
