import TaskScheduling
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// taskctl's commands: each calls the daemon and prints text or JSON.
enum Commands {
    /// Calls `method` and decodes its reply (each one, with `more`, handed to `onReply` with whether
    /// more follow); an error reply is a `Failure`.
    @discardableResult
    static func call<Method: VarlinkMethod>(
        _ socket: String, _ method: Method.Type, _ parameters: Method.Parameters, more: Bool = false,
        onReply: (Method.Reply, _ continues: Bool) -> Void = { _, _ in }
    ) throws(Failure) -> Method.Reply {
        var malformed: String?
        func decode(_ reply: VarlinkReply) -> Method.Reply? {
            do {
                return try Method.Reply(parameters: reply.parameters)
            } catch {
                malformed = "taskd sent a malformed \(Method.name) reply: \(JSONValueDecoder.describe(error))"
                return nil
            }
        }
        let reply: VarlinkReply
        do {
            let client = try VarlinkClient(path: socket)
            let call = VarlinkCall(method: Method.name, parameters: parameters.encodedParameters, more: more)
            reply = try client.call(call) { reply in
                guard reply.error == nil, malformed == nil, let decoded = decode(reply) else { return }
                onReply(decoded, reply.continues)
            }
        } catch {
            if case .notPermitted = error { throw Failure(code: .permissionDenied, message: error.description) }
            throw Failure(code: .unreachable, message: error.description)
        }
        if let name = reply.error { throw failure(name, reply.parameters) }
        guard malformed == nil, let decoded = decode(reply) else {
            throw Failure(code: .unreachable, message: malformed ?? "taskd sent a malformed reply")
        }
        return decoded
    }

    static func failure(_ name: String, _ parameters: [String: JSONValue]) -> Failure {
        let p = SchedulerErrorParameters(parameters: parameters)
        func list(_ names: [String]?) -> String { (names ?? []).joined(separator: ", ") }
        let target = p.target ?? ""
        switch name {
        case SchedulerInterface.noSuchTask:
            let known = list(p.known)
            return Failure(
                code: .noSuchTask,
                message: "no task matches '\(target)'; known tasks: \(known.isEmpty ? "(none)" : known)")
        case SchedulerInterface.ambiguousTarget:
            return Failure(code: .noSuchTask, message: "'\(target)' is ambiguous; it matches \(list(p.matches))")
        case SchedulerInterface.permissionDenied:
            return Failure(code: .permissionDenied, message: "permission denied: \(p.reason ?? "")")
        case SchedulerInterface.invalidConfiguration:
            let errors = p.errors ?? []
            return Failure(
                code: .runDidNotComplete,
                message: "reload refused; the running configuration stays:\n" + errors.joined(separator: "\n"))
        case SchedulerInterface.invalidRequest:
            return Failure(code: .usage, message: p.reason ?? "taskd refused the request")
        case SchedulerInterface.noSuchRun:
            return Failure(code: .noSuchTask, message: "no run has the id \(p.runId ?? "")")
        case SchedulerInterface.upgradeFailed:
            return Failure(code: .runDidNotComplete, message: "the upgrade did not happen: \(p.reason ?? "")")
        case SchedulerInterface.shuttingDown:
            return Failure(code: .unreachable, message: "taskd is shutting down")
        case SchedulerInterface.tooManyConnections:
            return Failure(
                code: .unreachable, message: "taskd refused the connection: \(p.reason ?? "")")
        default:
            return Failure(code: .usage, message: "taskd refused the request: \(name) \(JSONValue.object(parameters))")
        }
    }

    static func list(failed: Bool = false, overdue: Bool = false, names: Bool = false, json: Bool, socket: String)
        throws(Failure) -> ExitCode
    {
        let tasks = try call(socket, SchedulerInterface.List.self, NoParameters()).tasks.filter { t in
            let lastFailed = [.failed, .expired, .killed].contains(t.last?.state)
            return (!failed || t.consecutiveFailures > 0 || lastFailed) && (!overdue || t.overdue)
        }
        if names {
            for t in tasks { Terminal.out(t.name) }
            return .success
        }
        if json {
            Terminal.out(JSONValue.array(tasks.map(\.json)).description)
            return .success
        }
        let now = Terminal.nowUSec()
        var rows = [["NAME", "KIND", "HANDLER", "STATE", "NEXT", "LEFT", "LAST", "PASSED", "RESULT"]]
        for t in tasks { rows.append(listRow(t, now: now)) }
        Terminal.out(Terminal.table(rows))
        Terminal.out("\n\(tasks.count) task(s).")
        return .success
    }

    private static func listRow(_ t: TaskInfo, now: UInt64) -> [String] {
        let next = t.nextElapseUSec
        let lastStart: UInt64? = t.last.map { $0.startedUSec ?? $0.queuedUSec }
        var state = t.current.map { $0.waitingFor != nil ? "waiting" : $0.state.rawValue } ?? "idle"
        if !t.instances.isEmpty { state += " ×\(1 + t.instances.count)" }
        if !t.queue.isEmpty { state += " +\(t.queue.count)" }
        if t.paused { state = t.current == nil ? "paused" : state + ", paused" }
        var result = t.last?.state.rawValue ?? "-"
        if t.consecutiveFailures > 1 { result += " (\(t.consecutiveFailures) in a row)" }
        if t.overdue { result += ", overdue" }
        let left: String = next.map { $0 > now ? Terminal.span($0 - now, coarse: true) : "now" } ?? "-"
        let passed: String = lastStart.map { now > $0 ? Terminal.span(now - $0, coarse: true) + " ago" : "now" } ?? "-"
        return [
            t.name, t.kind, t.handler, state, next.map(Terminal.time) ?? "-", left,
            lastStart.map(Terminal.time) ?? "-", passed, result,
        ]
    }

    static func status(_ name: String, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let task = try call(socket, SchedulerInterface.Status.self, .init(name: name)).task
        if json {
            Terminal.out(task.json.description)
            return .success
        }
        var lines = ["\(task.name) (\(task.kind), \(task.handler) handler)"]
        if !task.description.isEmpty { lines.append("  Description: \(task.description)") }
        lines.append(
            "       Budget: \(Terminal.span(task.budgetUSec)), cancellation \(Terminal.span(task.cancelGraceUSec)) before its end"
        )
        lines.append(
            "       Policy: Overlap=\(task.overlap), MaxAttempts=\(task.maxAttempts)"
                + (task.fleet.map { ", Fleet=\($0)" } ?? ""))
        let current = task.current.map { run -> String in
            let since =
                run.startedUSec.map { " since \(Terminal.time($0))" } ?? " since \(Terminal.time(run.queuedUSec))"
            let waits = run.waitingFor.map { "; waiting: \($0)" } ?? ""
            return "\(run.state.rawValue), run \(run.runId)\(since)\(waits)"
                + (fleetDetail(run).map { ", \($0)" } ?? "")
        }
        lines.append("        State: " + (current ?? "idle"))
        if let since = task.pausedSinceUSec {
            let until = task.pausedUntilUSec.map { " until \(Terminal.time($0))" } ?? " until resumed"
            let note = task.pauseNote.map { $0.isEmpty ? "" : " (\($0))" } ?? ""
            lines.append("       Paused: since \(Terminal.time(since))\(until)\(note)")
        }
        var health: [String] = []
        if task.overdue { health.append("overdue") }
        if task.consecutiveFailures > 0 { health.append("\(task.consecutiveFailures) failure(s) in a row") }
        if let last = task.lastSuccessUSec { health.append("last success \(Terminal.time(last))") }
        if !health.isEmpty { lines.append("       Health: " + health.joined(separator: ", ")) }
        if let run = task.current, let progress = progressLine(run) {
            lines.append("     Progress: " + progress.dropFirst(run.task.count + 2))
        }
        for run in task.instances {
            lines.append("      Running: run \(run.runId) too (trigger \(run.trigger.rawValue), Overlap=allow)")
        }
        for run in task.queue { lines.append("       Queued: run \(run.runId) (trigger \(run.trigger.rawValue))") }
        if let attempt = task.retryAttempt, let due = task.retryDueUSec {
            lines.append("        Retry: attempt \(attempt) at \(Terminal.time(due))")
        }
        if let bytes = task.checkpointBytes, let run = task.checkpointRunId, let at = task.checkpointUSec {
            let use = task.resumeFrom == "start" ? "kept, not handed on (ResumeFrom=start)" : "for the next run"
            lines.append("   Checkpoint: \(bytes) bytes from run \(run.prefix(8)) at \(Terminal.time(at)), \(use)")
        }
        lines.append("     Next run: " + (task.nextElapseUSec.map(Terminal.time) ?? "only when woken"))
        lines.append("  Last result: " + (task.last.map(describe) ?? "none"))
        if let last = task.last, let used = usageLine(last) { lines.append("         Used: " + used) }
        for (i, run) in task.recent.enumerated() {
            let when = Terminal.time(run.startedUSec ?? run.queuedUSec)
            lines.append((i == 0 ? "       Recent: " : "               ") + "\(when) \(describe(run))")
        }
        Terminal.out(lines.joined(separator: "\n"))
        return .success
    }

    static func pause(_ target: String, until: UInt64?, note: String?, json: Bool, socket: String) throws(Failure)
        -> ExitCode
    {
        let parameters = SchedulerInterface.Pause.Parameters(target: target, untilUSec: until, note: note)
        let tasks = try call(socket, SchedulerInterface.Pause.self, parameters).tasks
        if json {
            Terminal.out(JSONValue.array(tasks.map { .string($0) }).description)
        } else {
            let until = until.map { " until \(Terminal.time($0))" } ?? " until taskctl resume"
            for task in tasks { Terminal.out("\(task): paused\(until)") }
        }
        return .success
    }

    static func resume(_ target: String, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let tasks = try call(socket, SchedulerInterface.Resume.self, .init(target: target)).tasks
        if json {
            Terminal.out(JSONValue.array(tasks.map { .string($0) }).description)
        } else if tasks.isEmpty {
            Terminal.out("\(target): nothing was paused")
        } else {
            for task in tasks { Terminal.out("\(task): resumed") }
        }
        return .success
    }

    static func why(_ name: String, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let reply = try call(socket, SchedulerInterface.Why.self, .init(name: name))
        if json {
            Terminal.out(Terminal.json(reply))
            return .success
        }
        var lines = ["\(reply.task):"]
        for reason in reply.reasons {
            let id = reason.messageId.map { "  [MESSAGE_ID=\($0)]" } ?? ""
            lines.append("  \(reason.text)\(id)")
        }
        Terminal.out(lines.joined(separator: "\n"))
        return .success
    }

    static func metrics(socket: String) throws(Failure) -> ExitCode {
        Terminal.raw(try call(socket, SchedulerInterface.Metrics.self, NoParameters()).text)
        return .success
    }

    /// `CPU 1.2s, memory peak 12.0M, IO 3.0M read / 1.0M written`: what a command's run used.
    static func usageLine(_ run: RunInfo) -> String? {
        var parts: [String] = []
        if let cpu = run.cpuUSec { parts.append("CPU \(Terminal.span(cpu))") }
        if let peak = run.memoryPeakBytes { parts.append("memory peak \(Terminal.bytes(peak))") }
        if let read = run.ioReadBytes, let written = run.ioWriteBytes {
            parts.append("IO \(Terminal.bytes(read)) read / \(Terminal.bytes(written)) written")
        }
        if run.failureReason == "oom" { parts.append("killed at MemoryMax= (out of memory)") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    static func history(_ name: String, limit: Int?, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let runs = try call(socket, SchedulerInterface.History.self, .init(name: name, limit: limit)).runs
        if json {
            Terminal.out(JSONValue.array(runs.map(\.json)).description)
            return .success
        }
        var rows = [["STARTED", "RUN", "TRIGGER", "ATTEMPT", "OUTCOME", "DURATION", "WAITED", "DETAILS"]]
        for run in runs {
            var details: [String] = []
            if let code = run.exitStatus, code != 0 { details.append("exit status \(code)") }
            if let s = run.signal { details.append(s) }
            if let r = run.cancelReason { details.append(r) }
            if let e = run.error { details.append(e) }
            if run.stale { details.append("stale") }
            if let fleet = fleetDetail(run) { details.append(fleet) }
            rows.append([
                run.startedUSec.map(Terminal.time) ?? "-", String(run.runId.prefix(12)), run.trigger.rawValue,
                String(run.attempt), run.state.rawValue, run.durationUSec.map { Terminal.span($0) } ?? "-",
                run.waitedUSec.map { Terminal.span($0) } ?? "-", details.joined(separator: ", "),
            ])
        }
        Terminal.out(Terminal.table(rows))
        Terminal.out("\n\(runs.count) run(s), the last to end first.")
        return .success
    }

    static func reload(json: Bool, socket: String) throws(Failure) -> ExitCode {
        let reply = try call(socket, SchedulerInterface.Reload.self, NoParameters())
        if json {
            Terminal.out(Terminal.json(reply))
            return .success
        }
        let (added, removed, changed) = (reply.added, reply.removed, reply.changed)
        if added.isEmpty && removed.isEmpty && changed.isEmpty {
            Terminal.out("Configuration reloaded; no task changed.")
        } else {
            Terminal.out("Configuration reloaded.")
            for (label, list) in [("added", added), ("removed", removed), ("changed", changed)] where !list.isEmpty {
                Terminal.out("  \(label): " + list.joined(separator: ", "))
            }
        }
        return .success
    }

    /// `drain [--timeout]`: 0 once no run is active, 1 with the runs still active at the timeout.
    static func drain(timeout: UInt64?, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let reply = try call(socket, SchedulerInterface.Drain.self, .init(timeoutUSec: timeout))
        if json {
            Terminal.out(Terminal.json(reply))
        } else if reply.drained {
            Terminal.out("Drained: no run is active, and none starts until taskctl drain --end or a restart.")
        } else {
            Terminal.out("Still active after the timeout (no new run starts meanwhile):")
            reply.runs.forEach { Terminal.out("  \($0.task): run \($0.runId) \($0.state.rawValue)") }
        }
        return reply.drained ? .success : .runDidNotComplete
    }

    static func endDrain(json: Bool, socket: String) throws(Failure) -> ExitCode {
        let waiting = try call(socket, SchedulerInterface.EndDrain.self, NoParameters()).waiting
        if json {
            Terminal.out(JSONValue.object(["waiting": .int(Int64(waiting))]).description)
        } else {
            Terminal.out("Drain ended: \(waiting) run(s) that waited start now.")
        }
        return .success
    }

    static func cancel(_ target: String, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let cancelled = try call(socket, SchedulerInterface.Cancel.self, .init(target: target)).runs
        if json {
            Terminal.out(JSONValue.array(cancelled.map(\.json)).description)
        } else if cancelled.isEmpty {
            let submitted = target.hasPrefix(TaskKind.submitted + ":")
            Terminal.out("\(target): \(submitted ? "withdrawn; no run was in progress" : "nothing to cancel")")
        } else {
            cancelled.forEach { Terminal.out("\($0.task): run \($0.runId) \($0.state.rawValue)") }
            // A submitted task the target names does not run again: it is withdrawn with its runs.
            let byRunID = cancelled.contains { $0.runId == target }
            let withdrawn = byRunID ? [] : Set(cancelled.filter { $0.kind == TaskKind.submitted }.map(\.task))
            withdrawn.sorted().forEach { Terminal.out("submitted:\($0): withdrawn") }
        }
        return .success
    }

    /// Replaces taskctl with `journalctl TASK=NAME …` (taskctl itself links no libsystemd).
    static func logs(_ name: String, follow: Bool, lines: String?, run: String?, json: Bool) throws(Failure) -> ExitCode
    {
        var argv = ["journalctl", "--no-pager", run.map { "TASK_RUN_ID=\($0)" } ?? "TASK=\(name)"]
        if follow { argv.append("--follow") }
        if let lines { argv += ["--lines", lines] }
        if json { argv += ["--output", "json"] }
        let cArgs = argv.map { strdup($0) } + [nil]
        execvp("journalctl", cArgs)
        throw Failure(code: .unreachable, message: "cannot run journalctl: \(String(cString: strerror(errno)))")
    }
}
