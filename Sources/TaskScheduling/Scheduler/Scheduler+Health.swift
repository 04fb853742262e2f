/// How tasks are doing: overdue and failing alerts, pauses, and the tasks woken on a success, a
/// failure or an overdue (`OnSuccess=`, `OnFailure=`, `OnOverdue=`).
extension Scheduler {
    /// What is known of how `key` has been doing (nothing yet: the defaults).
    public func health(of key: TaskKey) -> TaskHealth { health[key] ?? TaskHealth() }

    /// True while the task is paused.
    public func isPaused(_ key: TaskKey) -> Bool { paused.contains(key) }

    /// Pauses every task the target names: their timers and wakes are recorded, not run, until
    /// `resume` or `until` (CLOCK_REALTIME µs). A run in progress goes on.
    public mutating func pause(target: String, until: UInt64?, note: String, at now: ClockReading)
        throws(TargetError) -> (keys: [TaskKey], actions: [SchedulerAction])
    {
        var actions: [SchedulerAction] = []
        let keys = try resolver.resolve(target)
        for key in keys {
            pause(key, TaskPause(since: now.realtime, until: until, note: note), at: now, actions: &actions)
        }
        return (keys, actions)
    }

    /// Resumes every task the target names; a task that was not paused is left as it is.
    public mutating func resume(target: String, at now: ClockReading)
        throws(TargetError) -> (keys: [TaskKey], actions: [SchedulerAction])
    {
        var actions: [SchedulerAction] = []
        let keys = try resolver.resolve(target).filter { paused.contains($0) }
        for key in keys { unpause(key, reason: "resumed", actions: &actions) }
        return (keys, actions)
    }

    mutating func pause(_ key: TaskKey, _ pause: TaskPause, at now: ClockReading, actions: inout [SchedulerAction]) {
        health[key, default: TaskHealth()].pause = pause
        armPause(key, pause, at: now)
        actions.append(.alert(.paused(key, pause)))
        actions.append(.persistHealth(key, health[key]!))
    }

    /// The task counts as paused, and a pause with an end ends then (a kept pause, at start).
    mutating func armPause(_ key: TaskKey, _ pause: TaskPause, at now: ClockReading) {
        paused.insert(key)
        if let until = pause.until {
            pauseEnds[key] = until > now.realtime ? now.monotonic &+ (until - now.realtime) : now.monotonic
        } else {
            pauseEnds[key] = nil
        }
    }

    private mutating func unpause(_ key: TaskKey, reason: String, actions: inout [SchedulerAction]) {
        health[key]?.pause = nil
        paused.remove(key)
        pauseEnds[key] = nil
        actions.append(.alert(.resumed(key, reason: reason)))
        actions.append(.persistHealth(key, health[key] ?? TaskHealth()))
    }

    /// A trigger of a paused task: recorded as a run that ends at once (`cancelled`, reason
    /// `paused`), not run.
    mutating func pausedTrigger(
        _ key: TaskKey, _ run: Run, at now: ClockReading, actions: inout [SchedulerAction]
    ) -> WakeResult {
        WakeResult(run: cancel(run, reason: .paused, at: now, actions: &actions), disposition: .paused)
    }

    /// Pauses that end and overdue deadlines that pass at `now`.
    mutating func checkHealth(at now: ClockReading, actions: inout [SchedulerAction]) {
        for (key, end) in pauseEnds where end <= now.monotonic {
            unpause(key, reason: "its pause ended", actions: &actions)
        }
        for (key, due) in overdueAt where due <= now.monotonic {
            overdueAt[key] = nil
            guard let d = tasks[key]?.definition, !health(of: key).overdue else { continue }
            health[key, default: TaskHealth()].overdue = true
            let last = health[key]!.lastSuccess
            actions.append(.alert(.overdue(key, lastSuccess: last, within: d.expectSuccessWithin.microseconds)))
            actions.append(.persistHealth(key, health[key]!))
            var payload = #"{"task":"\#(key.identifier)","kind":"\#(key.kind)","event":"overdue""#
            if let last { payload += #","lastSuccessUSec":\#(last)"# }
            chain(d.onOverdue, payload: payload + "}", at: now, actions: &actions)
        }
    }

    /// Arms the overdue deadline of a task with `ExpectSuccessWithinSec=`: that long after its
    /// last completed run, or after the scheduler learnt of it.
    mutating func armOverdue(_ key: TaskKey, at now: ClockReading) {
        let within = tasks.read(key) { $0.definition.expectSuccessWithin.microseconds } ?? 0
        guard within > 0 else {
            overdueAt[key] = nil
            health[key]?.overdue = false  // no longer watched (a reload removed the key)
            return
        }
        guard !health(of: key).overdue else {
            overdueAt[key] = nil
            return
        }
        let due = (health[key]?.lastSuccess ?? now.realtime) &+ within
        overdueAt[key] = due > now.realtime ? now.monotonic &+ (due - now.realtime) : now.monotonic
    }

    /// A run of the task's own ended for good (`retrying`: a retry follows): its health, the
    /// alerts and pause that follow, and the tasks it wakes.
    mutating func recordEnd(_ run: Run, retrying: Bool, at now: ClockReading, actions: inout [SchedulerAction]) {
        guard let outcome = run.outcome, let d = tasks[run.key]?.definition else { return }
        let failed = outcome == .failed || outcome == .expired || outcome == .killed
        guard outcome == .completed || (failed && !retrying) else { return }
        let before = health[run.key] ?? TaskHealth()
        var h = before
        // The run's result (a Swift handler's return value, a command's RESULT=) rides along, for
        // the next task of a chain.
        func payload() -> String {
            let result = run.result.map { #","result":\#($0)"# } ?? ""
            return
                #"{"task":"\#(run.key.identifier)","kind":"\#(run.key.kind)","runId":"\#(run.id)","outcome":"\#(outcome.rawValue)"\#(result)}"#
        }
        if outcome == .completed {
            h.lastSuccess = now.realtime
            h.consecutiveFailures = 0
            for (raised, name) in [(h.overdue, "overdue"), (h.failing, "failing")] where raised {
                actions.append(.alert(.recovered(run.key, from: name, run: run)))
            }
            h.overdue = false
            h.failing = false
            health[run.key] = h
            armOverdue(run.key, at: now)
            if !d.onSuccess.isEmpty { chain(d.onSuccess, payload: payload(), at: now, actions: &actions) }
        } else {
            h.consecutiveFailures += 1
            if d.alertAfterFailures > 0, h.consecutiveFailures >= d.alertAfterFailures, !h.failing {
                h.failing = true
                actions.append(.alert(.failing(run.key, failures: h.consecutiveFailures, run: run)))
            }
            health[run.key] = h
            if d.pauseAfterFailures > 0, h.consecutiveFailures >= d.pauseAfterFailures, !paused.contains(run.key) {
                let note = "PauseAfterFailures=\(d.pauseAfterFailures): \(h.consecutiveFailures) failures in a row"
                pause(run.key, TaskPause(since: now.realtime, note: note), at: now, actions: &actions)
            }
            if !d.onFailure.isEmpty { chain(d.onFailure, payload: payload(), at: now, actions: &actions) }
        }
        // A success alone changes only its time: kept on disk where an overdue deadline counts from it
        // (elsewhere the history's last run says it at start).
        var unchanged = before
        unchanged.lastSuccess = health[run.key]!.lastSuccess
        if unchanged != health[run.key]! || d.expectSuccessWithin.microseconds > 0 {
            actions.append(.persistHealth(run.key, health[run.key]!))
        }
    }

    /// Wakes each task `targets` names with `payload` (targets that name no task are skipped:
    /// the daemon says so when it loads the configuration).
    private mutating func chain(
        _ targets: [String], payload: String, at now: ClockReading, actions: inout [SchedulerAction]
    ) {
        for target in targets {
            guard let keys = try? resolver.resolve(target) else { continue }
            for key in keys {
                _ = trigger(key, TriggerRequest(trigger: .wake, payload: payload), at: now, actions: &actions)
            }
        }
    }
}
