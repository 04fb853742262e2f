/// `taskctl why`: what decides, now, whether a task runs.
extension Scheduler {
    /// The reasons `key` runs, waits or does not run now, the most decisive first.
    public func explain(_ key: TaskKey, at now: ClockReading) -> [WhyReason] {
        guard let state = tasks[key] else { return [] }
        let d = state.definition
        var reasons: [WhyReason] = []
        func time(_ realtime: UInt64) -> String { Timestamp.format(realtime) }
        if isStopping { reasons.append(WhyReason(.stopping, "taskd is stopping: no run starts")) }
        if isSleeping {
            reasons.append(WhyReason(.sleeping, "the system is going to sleep: no run starts until it resumes"))
        }
        if isDraining {
            reasons.append(
                WhyReason(
                    .draining, "taskd is draining (taskctl drain): no run starts until the drain ends or taskd restarts"
                ))
        }
        let h = health(of: key)
        if let pause = h.pause {
            let until = pause.until.map { " until \(time($0))" } ?? " until resumed"
            let note = pause.note.isEmpty ? "" : " (\(pause.note))"
            reasons.append(
                WhyReason(
                    .paused,
                    "paused since \(time(pause.since))\(until)\(note): its timers and wakes are recorded, not run",
                    at: pause.until))
        }
        if let id = state.currentRunID, let run = runs[id] {
            reasons += currentRunReasons(run, of: state, at: now)
        }
        if let retry = state.retry {
            let due = now.realtime(at: retry.due)
            reasons.append(
                WhyReason(
                    .retryPending,
                    "attempt \(retry.attempt) (a retry of run \(retry.failedRunID.prefix(8))) at \(time(due))",
                    runID: retry.failedRunID, at: due))
        }
        if let next = state.nextElapse {
            let due = now.realtime(at: next)
            reasons.append(WhyReason(.nextTimer, "next timer at \(time(due))" + timerKind(state, next), at: due))
        } else {
            reasons.append(WhyReason(.wakeOnly, "no timer is armed: it runs only when woken"))
        }
        if h.overdue {
            let since = h.lastSuccess.map { "since \(time($0))" } ?? "ever"
            reasons.append(
                WhyReason(
                    .overdue, "overdue: no completed run \(since) (ExpectSuccessWithinSec=\(d.expectSuccessWithin))",
                    at: h.lastSuccess))
        }
        if h.consecutiveFailures > 0 {
            let alerted = h.failing ? " (AlertAfterFailures=\(d.alertAfterFailures))" : ""
            reasons.append(
                WhyReason(h.failing ? .failing : .failures, "\(h.consecutiveFailures) run(s) in a row failed\(alerted)")
            )
        }
        if let refusal = h.lastRefusal {
            reasons.append(
                WhyReason(
                    .lastRefusal,
                    "last refusal: a \(refusal.trigger.rawValue) trigger at \(time(refusal.at)), queue full and its "
                        + "payload unlike run \(refusal.runID.prefix(8))'s", runID: refusal.runID, at: refusal.at))
        }
        if let last = state.lastRun, let outcome = last.outcome {
            reasons.append(
                WhyReason(
                    .lastResult,
                    "last run \(last.id.prefix(8)): \(outcome.rawValue)"
                        + (last.ended.map { " at \(time($0.realtime))" } ?? ""), runID: last.id,
                    at: last.ended?.realtime))
        }
        return reasons
    }

    /// What the task's current run does now (runs, waits, has runs queued behind it) and what a
    /// trigger would do to it.
    private func currentRunReasons(_ run: Run, of state: TaskState, at now: ClockReading) -> [WhyReason] {
        let id = run.id
        var reasons: [WhyReason] = []
        func time(_ realtime: UInt64) -> String { Timestamp.format(realtime) }
        if run.isActive {
            let since = run.started.map { " since \(time($0.realtime))" } ?? ""
            reasons.append(
                WhyReason(.running, "run \(id.prefix(8)) is running\(since)", runID: id, at: run.started?.realtime))
        } else if !run.waitingFor.isEmpty {
            let what = run.waitingFor.map(\.waitingText).joined(separator: ", ")
            let giveUp = deferUntil[id].map { "; gives up at \(time(now.realtime(at: $0)))" } ?? ""
            reasons.append(
                WhyReason(.waitingForConditions, "run \(id.prefix(8)) waits: \(what)\(giveUp)", runID: id))
        } else if !run.after.isEmpty {
            let before = run.after.compactMap { runs[$0] }.map { "run \($0.id.prefix(8)) of \($0.key.identifier)" }
            reasons.append(
                WhyReason(
                    .waitingForOrder,
                    "run \(id.prefix(8)) waits for \(before.joined(separator: ", ")) to end (After=)", runID: id))
        } else if run.waitingForGroup, let name = run.group {
            let holders = (groups.holders[name] ?? []).compactMap { runs[$0] }
            let held = holders.map { "run \($0.id.prefix(8)) of \($0.key.identifier)" }.joined(separator: ", ")
            let ahead = groups.waiting[name]?.firstIndex(of: id) ?? 0
            reasons.append(
                WhyReason(
                    .waitingForGroup,
                    "run \(id.prefix(8)) waits its turn in ConcurrencyGroup=\(name): \(holders.count) of "
                        + "\(groups.sizes[name] ?? 1) place(s) taken (\(held)), \(ahead) run(s) ahead of it",
                    runID: id))
        } else if let position = ready.firstIndex(of: id) {
            reasons.append(
                WhyReason(
                    .waitingForSlot,
                    "run \(id.prefix(8)) waits for a free slot: \(activeCount) of \(maxConcurrentRuns) busy "
                        + "(MaxConcurrentRuns=), \(position) run(s) ahead of it", runID: id))
        }
        if !state.queue.isEmpty {
            let why =
                switch state.definition.overlap {
                case .queue: "Overlap=queue"
                case .allow: "Overlap=allow, at MaxInstances=\(state.definition.maxInstances)"
                default: "their payloads differ from the run's"
                }
            reasons.append(
                WhyReason(
                    .queuedBehind, "\(state.queue.count) run(s) queued behind run \(id.prefix(8)) (\(why))", runID: id))
        }
        switch state.definition.overlap {
        case .coalesce:
            reasons.append(
                WhyReason(.joinsRun, "a trigger now joins run \(id.prefix(8)) (Overlap=coalesce)", runID: id))
        case .replace:
            reasons.append(
                WhyReason(.replacesRun, "a trigger now replaces run \(id.prefix(8)) (Overlap=replace)", runID: id))
        case .skip:
            reasons.append(
                WhyReason(
                    .skipsTrigger, "a trigger now is skipped: run \(id.prefix(8)) is in progress (Overlap=skip)",
                    runID: id))
        case .allow:
            let running = state.inProgress.count
            let limit = state.definition.maxInstances
            reasons.append(
                WhyReason(
                    .runsBeside,
                    "\(running) run(s) in progress (Overlap=allow"
                        + (limit == 0
                            ? "): a trigger now starts another beside them"
                            : ", MaxInstances=\(limit)): a trigger now "
                                + (running < limit ? "starts another beside them" : "waits for one to end")),
                    runID: id))
        case .queue:
            break
        }
        return reasons
    }

    /// ` (OnCalendar=)`, ` (OnUnitActiveSec=)`…: which timer is next.
    private func timerKind(_ state: TaskState, _ next: UInt64) -> String {
        let due = next &- state.randomDelay
        if state.requestedMonotonic == due { return " (asked for by its handler)" }
        if state.pendingStartup.first == due { return " (OnStartupSec=)" }
        if state.calendarDueMonotonic == due { return state.catchUp.isEmpty ? " (OnCalendar=)" : " (catch-up)" }
        if state.resumeAt == due { return " (carried over a restart or sleep)" }
        return state.definition.onUnitInactive.isEmpty
            ? " (OnUnitActiveSec=)" : " (OnUnitActiveSec=/OnUnitInactiveSec=)"
    }
}
