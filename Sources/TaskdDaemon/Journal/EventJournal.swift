import TaskRuntime
import TaskScheduling
import TaskdSystem

/// Turns scheduler events and daemon events into journal entries (docs/journal.md): a readable
/// `MESSAGE`, a `PRIORITY`, the event's `MESSAGE_ID` and the run's `TASK_*` fields.
package struct EventJournal: Sendable {
    let backend: any LogBackend

    package init(backend: any LogBackend) { self.backend = backend }

    /// Calls `body` once every entry journaled before has been handed to journald (or its fallback).
    func whenHandedOn(_ body: @escaping @Sendable () -> Void) { backend.whenHandedOn(body) }

    /// Journals `event`; its entry is formatted on the journal's thread.
    func report(_ event: SchedulerEvent) {
        backend.send(lazy: { Self.entry(for: event) })
    }

    package static func entry(for event: SchedulerEvent) -> LogEntry {
        let run = event.run
        let name = run.key.identifier
        let short = String(run.id.prefix(8))
        var entry: LogEntry
        switch event {
        case .started:
            entry = Self.entry(
                .runStarted, 6,
                "\(name): run \(short) started (trigger \(run.trigger.rawValue)"
                    + (run.attempt > 1 ? ", attempt \(run.attempt)" : "") + ", budget \(run.budget))")
        case .waiting where run.waitingForGroup:
            let group = run.group ?? ""
            entry = Self.entry(.runQueued, 6, "\(name): run \(short) waits its turn in ConcurrencyGroup=\(group)")
            entry.set("TASK_QUEUE", "group")
            entry.set("TASK_CONCURRENCY_GROUP", group)
        case .waiting where !run.after.isEmpty:
            let runs = run.after.map { String($0.prefix(8)) }.joined(separator: ", ")
            entry = Self.entry(.runQueued, 6, "\(name): run \(short) waits for run \(runs) to end (After=)")
            entry.set("TASK_QUEUE", "after")
            entry.set("TASK_AFTER_RUN_IDS", run.after.joined(separator: " "))
        case .waiting:
            entry = Self.entry(.runQueued, 6, "\(name): run \(short) waits for a free slot (MaxConcurrentRuns=)")
            entry.set("TASK_QUEUE", "slot")
        case .queued:
            entry = Self.entry(
                .runQueued, 6,
                "\(name): run \(short) queued behind the run in progress (Overlap=queue, allow at MaxInstances=, or a payload unlike that run's)"
            )
            entry.set("TASK_QUEUE", "task")
        case .coalesced(_, let trigger):
            entry = Self.entry(.coalesced, 6, "\(name): \(trigger.rawValue) trigger coalesced into run \(short)")
            entry.set("TASK_COALESCED_TRIGGER", trigger.rawValue)
        case .overflow(_, let trigger):
            entry = Self.entry(
                .queueOverflow, 4,
                "\(name): queue full (QueueLimit=); \(trigger.rawValue) trigger joined queued run \(short)")
            entry.set("TASK_COALESCED_TRIGGER", trigger.rawValue)
        case .refused(_, let trigger):
            entry = Self.entry(
                .queueOverflow, 4,
                "\(name): queue full (QueueLimit=) and the \(trigger.rawValue) trigger's payload differs from "
                    + "queued run \(short)'s: refused")
            entry.set("TASK_REFUSED_TRIGGER", trigger.rawValue)
        case .skipped(_, let trigger):
            entry = Self.entry(
                .triggerSkipped, 6,
                "\(name): \(trigger.rawValue) trigger skipped: run \(short) is in progress (Overlap=skip)")
            entry.set("TASK_SKIPPED_TRIGGER", trigger.rawValue)
        case .retryWaits(_, let until):
            entry = Self.retry(run, name: name, short: short, waits: until, delay: nil)
        case .retryDropped:
            entry = Self.retry(run, name: name, short: short, waits: nil, delay: nil)
        case .retryScheduled(_, let delay):
            entry = Self.retry(run, name: name, short: short, waits: nil, delay: delay)
        case .cancelling:
            var reason = run.cancelReason?.rawValue ?? "?"
            if !run.lostConditions.isEmpty {
                reason += ": not " + run.lostConditions.map(\.waitingText).joined(separator: ", ")
            }
            entry = Self.entry(.cancelSignalled, 5, "\(name): run \(short) cancellation signalled (\(reason))")
        case .killing:
            entry = Self.entry(.runKilled, 4, "\(name): run \(short) reached its hard stop; killing")
            entry.set("TASK_PHASE", "killing")
        case .ended:
            entry = Self.ended(run, name: name, short: short)
        case .deferred:
            let waiting = run.waitingFor.map(\.waitingText).joined(separator: ", ")
            entry = Self.entry(.runQueued, 6, "\(name): run \(short) waits: \(waiting)")
            entry.set("TASK_QUEUE", "conditions")
            entry.set("TASK_WAITING_FOR", run.waitingFor.map(\.description).joined(separator: " "))
        case .progress:
            let parts = [run.progress?.countText, run.progress?.status].compactMap { $0 }
            entry = Self.entry(.runProgress, 6, "\(name): run \(short) progress: \(parts.joined(separator: ", "))")
        }
        Self.addRunFields(run, to: &entry)
        return entry
    }

    /// The entry of a retry that waits, was dropped, or is scheduled.
    /// The entry of a retry that waits for an abandoned run (`waits`, at most that long), is
    /// scheduled (`delay`), or neither: dropped.
    private static func retry(_ run: Run, name: String, short: String, waits: UInt64?, delay: UInt64?) -> LogEntry {
        var entry: LogEntry
        if let until = waits {
            let most = TimeSpan(microseconds: until).format(accuracy: 1000)
            entry = Self.entry(
                .retryScheduled, 5,
                "\(name): attempt \(run.attempt + 1) waits for abandoned run \(short) to return, at most \(most); "
                    + "then it starts anyway")
            entry.set("TASK_RETRY_WAITS_USEC", String(until))
        } else if let delay {
            let after = TimeSpan(microseconds: delay).format(accuracy: 1000)
            entry = Self.entry(
                .retryScheduled, 5,
                "\(name): run \(short) \(run.outcome?.rawValue ?? "failed"); attempt \(run.attempt + 1) in \(after)")
            entry.set("TASK_RETRY_DELAY_USEC", String(delay))
        } else {
            entry = Self.entry(
                .retryScheduled, 5, "\(name): attempt \(run.attempt + 1), the retry of run \(short), dropped")
            entry.set("TASK_RETRY_DROPPED", "1")
        }
        entry.set("TASK_RETRY_ATTEMPT", String(run.attempt + 1))
        return entry
    }

    private static func ended(_ run: Run, name: String, short: String) -> LogEntry {
        let took = TimeSpan(microseconds: run.duration ?? 0).format(accuracy: 1000)
        let how = describe(run.termination)
        switch run.outcome ?? .failed {
        case .completed:
            return entry(.runCompleted, 6, "\(name): run \(short) completed in \(took)")
        case .failed:
            return entry(.runFailed, 3, "\(name): run \(short) failed (\(how)) after \(took)")
        case .cancelled where run.cancelReason == .elsewhere:
            let holder = run.fleetHost.map { " by \($0)" } ?? ""
            let token = run.fenceToken.map { " (fence token \($0))" } ?? ""
            return entry(
                .runCancelled, 6, "\(name): run \(short) not run here: its slot is held or was run\(holder)\(token)")
        case .cancelled where run.started == nil:
            let reason = run.cancelReason?.rawValue ?? "?"
            return entry(.runCancelled, 5, "\(name): run \(short) cancelled (\(reason)) before it started")
        case .cancelled:
            let reason = run.cancelReason?.rawValue ?? "?"
            let stale = run.fenced ? "; its result is stale and ignored" : ""
            return entry(.runCancelled, 5, "\(name): run \(short) cancelled (\(reason)) after \(took), \(how)\(stale)")
        case .expired where run.partial:
            return entry(
                .runExpired, 4,
                "\(name): run \(short) expired: it ended by itself (\(how)) after its budget's cancellation, "
                    + "\(took) in; done partially, not retried")
        case .expired:
            return entry(
                .runExpired, 4,
                "\(name): run \(short) expired: it ended (\(how)) after its budget's cancellation, \(took) in")
        case .killed:
            let what = run.termination == nil ? "abandoned (the Swift task ignored cancellation)" : "killed (\(how))"
            return entry(.runKilled, 3, "\(name): run \(short) \(what) at the end of its \(run.budget) budget")
        }
    }

    /// Journals something about a task as a whole: overdue, failing, recovered, paused, resumed.
    func alert(_ alert: TaskAlert) {
        let key = alert.key
        let name = key.identifier
        var fields: [(key: String, value: String)] = [("TASK", name), ("TASK_KIND", key.kind)]
        let id: MessageID
        let priority: Int
        let message: String
        switch alert {
        case .overdue(_, let last, let within):
            id = .taskOverdue
            priority = 3
            let since = last.map { "since \(Timestamp.format($0))" } ?? "since taskd learnt of it"
            message =
                "\(name): overdue: no completed run \(since) (ExpectSuccessWithinSec=\(TimeSpan(microseconds: within)))"
            if let last { fields.append(("TASK_LAST_SUCCESS_USEC", String(last))) }
        case .failing(_, let failures, let run):
            id = .taskFailing
            priority = 3
            message =
                "\(name): \(failures) runs in a row failed (AlertAfterFailures=); the last, run \(run.id.prefix(8)), \(run.outcome?.rawValue ?? "failed")"
            fields += [("TASK_CONSECUTIVE_FAILURES", String(failures)), ("TASK_RUN_ID", run.id)]
        case .recovered(_, let from, let run):
            id = .taskRecovered
            priority = 5
            message = "\(name): recovered: run \(run.id.prefix(8)) completed (it was \(from))"
            fields += [("TASK_RECOVERED_FROM", from), ("TASK_RUN_ID", run.id)]
        case .paused(_, let pause):
            id = .taskPaused
            priority = 5
            let until = pause.until.map { " until \(Timestamp.format($0))" } ?? ""
            message = "\(name): paused\(until)" + (pause.note.isEmpty ? "" : ": \(pause.note)")
            if let until = pause.until { fields.append(("TASK_PAUSED_UNTIL_USEC", String(until))) }
            if !pause.note.isEmpty { fields.append(("TASK_PAUSE_NOTE", pause.note)) }
        case .resumed(_, let reason):
            id = .taskResumed
            priority = 5
            message = "\(name): resumed (\(reason))"
        }
        daemon(id, priority, message, fields)
    }

    private static func describe(_ t: Termination?) -> String {
        switch t {
        case .exited(let code)?: return "exit status \(code)"
        case .signaled(let s)?: return "signal \(SignalNames.name(s))"
        case .returned?: return "returned"
        case .threw(let e)?: return "threw \(e)"
        case .threwNoRetry(let e)?: return "threw PermanentFailure: \(e)"
        case .spawnFailed(let e)?: return "could not start: \(e)"
        case .lost(let e)?: return "its end was not seen: \(e)"
        case .outOfMemory?: return "killed by the OOM killer at its MemoryMax="
        case nil: return "no result"
        }
    }

    static func entry(
        _ id: MessageID, _ priority: Int, _ message: String, _ fields: [(key: String, value: String)] = []
    ) -> LogEntry {
        LogEntry([("MESSAGE", message), ("PRIORITY", String(priority)), ("MESSAGE_ID", id.rawValue)] + fields)
    }

    static func addRunFields(_ run: Run, to entry: inout LogEntry) {
        entry.set("TASK", run.key.identifier)
        entry.set("TASK_KIND", run.key.kind)
        entry.set("TASK_RUN_ID", run.id)
        entry.set("TASK_TRIGGER", run.trigger.rawValue)
        entry.set("TASK_ATTEMPT", String(run.attempt))
        entry.set("TASK_BUDGET_USEC", String(run.budget.microseconds))
        if let wake = run.wakeID { entry.set("TASK_WAKE_ID", wake) }
        if let host = run.fleetHost { entry.set("TASK_FLEET_HOST", host) }
        if let token = run.fenceToken { entry.set("TASK_FENCE_TOKEN", String(token)) }
        if let outcome = run.outcome { entry.set("TASK_OUTCOME", outcome.rawValue) }
        if let duration = run.duration { entry.set("TASK_DURATION_USEC", String(duration)) }
        if let reason = run.cancelReason { entry.set("TASK_CANCEL_REASON", reason.rawValue) }
        if !run.lostConditions.isEmpty {
            entry.set("TASK_CONDITIONS_LOST", run.lostConditions.map(\.description).joined(separator: " "))
        }
        if let waited = run.waited, waited > 0 { entry.set("TASK_WAITED_USEC", String(waited)) }
        if let progress = run.progress {
            if let completed = progress.completed { entry.set("TASK_PROGRESS_COMPLETED", String(completed)) }
            if let total = progress.total { entry.set("TASK_PROGRESS_TOTAL", String(total)) }
            if let status = progress.status { entry.set("TASK_STATUS", status) }
        }
        if run.fenced && run.outcome != nil { entry.set("TASK_STALE", "1") }
        if run.partial { entry.set("TASK_PARTIAL", "1") }
        switch run.termination {
        case .exited(let code)?: entry.set("TASK_EXIT_STATUS", String(code))
        case .signaled(let s)?: entry.set("TASK_SIGNAL", SignalNames.name(s))
        case .threw(let e)?, .threwNoRetry(let e)?, .spawnFailed(let e)?: entry.set("TASK_ERROR", e)
        case .outOfMemory?:
            entry.set("TASK_SIGNAL", "SIGKILL")
            entry.set("TASK_FAILURE_REASON", "oom")
        case .lost(let e)?:
            entry.set("TASK_ERROR", e)
            entry.set("TASK_FAILURE_REASON", "lost")
        case .returned?, nil: break
        }
        if let usage = run.usage {
            if let cpu = usage.cpuUSec { entry.set("TASK_CPU_USEC", String(cpu)) }
            if let peak = usage.memoryPeakBytes { entry.set("TASK_MEMORY_PEAK_BYTES", String(peak)) }
            if let read = usage.ioReadBytes { entry.set("TASK_IO_READ_BYTES", String(read)) }
            if let written = usage.ioWriteBytes { entry.set("TASK_IO_WRITE_BYTES", String(written)) }
            entry.set("TASK_USAGE_SOURCE", usage.source)
        }
    }

    /// A line of a command's output, or the count of lines its rate limit dropped, with the run's fields.
    func output(_ output: CommandOutput, run: Run, limit: OutputRateLimit) {
        if let entry = Self.entry(for: output, run: run, limit: limit) { backend.send(entry) }
    }

    /// How the run keeper journals a run's output: the same entries, encoded for it to write, and
    /// written once the entries journaled before (the run's start) are handed on. Where the backend
    /// has no such form (a test's collector), the entries are sent here and none to the keeper.
    /// `unit`: taskd's, when the keeper lives outside it (`OBJECT_SYSTEMD_UNIT=`, which
    /// `journalctl -u` matches in entries from root).
    func keptOutput(of run: Run, limit: OutputRateLimit, unit: String?) -> KeptOutput {
        let backend = self.backend
        return KeptOutput(
            records: { outputs in
                let entries = outputs.compactMap { output -> LogEntry? in
                    var entry = Self.entry(for: output, run: run, limit: limit)
                    if let unit { entry?.set("OBJECT_SYSTEMD_UNIT", unit) }
                    return entry
                }
                if let encoded = backend.encoded(entries) { return encoded }
                entries.forEach(backend.send)
                return ([], true)
            },
            afterOwnEntries: { backend.whenHandedOn($0) })
    }

    static func entry(for output: CommandOutput, run: Run, limit: OutputRateLimit) -> LogEntry? {
        var entry: LogEntry
        switch output {
        case .notification:
            return nil  // progress and status, not output (the daemon hands them to the scheduler)
        case .line(let line):
            entry = LogEntry([("MESSAGE", line.text), ("PRIORITY", String(line.priority))])
            entry.set("TASK_STREAM", line.stream.rawValue)
            entry.sheddable = true
        case .dropped(let count):
            entry = Self.entry(
                .outputSuppressed, 4,
                "\(run.key.identifier): suppressed \(count) line(s) of output from run \(run.id) "
                    + "(LogRateLimitBurst=\(limit.burst) per LogRateLimitIntervalSec=\(limit.interval))")
            entry.set("TASK_OUTPUT_SUPPRESSED", String(count))
        case .shed(let count):
            // The run keeper's: journald took none of its entries for 0.1 s.
            entry = LogEntry([
                (
                    "MESSAGE",
                    "\(run.key.identifier): dropped \(count) line(s) of output from run \(run.id): journald did not "
                        + "keep up with the run keeper"
                ), ("PRIORITY", "4"), ("TASKD_OUTPUT_SHED", String(count)),
            ])
        }
        entry.set("TASK", run.key.identifier)
        entry.set("TASK_KIND", run.key.kind)
        entry.set("TASK_RUN_ID", run.id)
        entry.set("TASK_TRIGGER", run.trigger.rawValue)
        entry.set("TASK_ATTEMPT", String(run.attempt))
        return entry
    }

    /// A daemon-level event (ready, stopping, config errors, requests).
    func daemon(_ id: MessageID, _ priority: Int, _ message: String, _ fields: [(key: String, value: String)] = []) {
        backend.send(Self.entry(id, priority, message, fields))
    }

    /// A daemon event whose message and fields `make` formats, on the journal's thread; not made
    /// at all where the backend keeps no entry of `priority` (debug, on standard error).
    func daemon(
        _ id: MessageID, _ priority: Int, lazy make: @escaping @Sendable () -> (String, [(key: String, value: String)])
    ) {
        guard backend.keeps(priority: priority) else { return }
        backend.send(lazy: {
            let (message, fields) = make()
            return Self.entry(id, priority, message, fields)
        })
    }
}

extension EventJournal {
    /// A run taken over from the previous image of taskd (`taskctl upgrade`), its leader `pid`.
    func adopted(_ run: Run, pid: Int32, after event: String) {
        let deadline = run.deadlineRealtime.map { Timestamp.format($0) } ?? "none"
        var entry = Self.entry(
            .runAdopted, 6,
            "\(run.key.identifier): run \(run.id.prefix(8)) adopted after \(event) (pid \(pid), budget ends \(deadline))",
            [("TASK_PID", String(pid))])
        Self.addRunFields(run, to: &entry)
        backend.send(entry)
    }

    /// A reload applied: what it added, removed and changed.
    func reloaded(_ diff: ReloadDiff) {
        func names(_ keys: [TaskKey]) -> String {
            keys.isEmpty ? "none" : keys.map(\.description).joined(separator: ", ")
        }
        daemon(
            .reloaded, 5,
            diff.isEmpty
                ? "configuration reloaded: no task changed"
                : "configuration reloaded: added \(names(diff.added)); removed \(names(diff.removed)); changed \(names(diff.changed))",
            [
                ("TASKD_ADDED", diff.added.map(\.description).joined(separator: " ")),
                ("TASKD_REMOVED", diff.removed.map(\.description).joined(separator: " ")),
                ("TASKD_CHANGED", diff.changed.map(\.description).joined(separator: " ")),
            ])
    }
}
