import TaskScheduling
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// taskctl's commands: each calls the daemon and prints text or JSON.
enum Commands {
    static func call(
        _ socket: String, _ method: String, _ parameters: [String: JSONValue] = [:], more: Bool = false,
        onReply: (VarlinkReply) -> Void = { _ in }
    ) throws(Failure) -> VarlinkReply {
        let reply: VarlinkReply
        do {
            let client = try VarlinkClient(path: socket)
            reply = try client.call(VarlinkCall(method: method, parameters: parameters, more: more), onReply: onReply)
        } catch {
            throw Failure(code: .unreachable, message: error.description)
        }
        guard let name = reply.error else { return reply }
        throw failure(name, reply.parameters)
    }

    static func failure(_ name: String, _ p: [String: JSONValue]) -> Failure {
        func list(_ key: String) -> String {
            (p[key]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
        }
        let target = p["target"]?.stringValue ?? ""
        switch name {
        case SchedulerInterface.noSuchTask:
            let known = list("known")
            return Failure(
                code: .noSuchTask,
                message: "no task matches '\(target)'; known tasks: \(known.isEmpty ? "(none)" : known)")
        case SchedulerInterface.ambiguousTarget:
            return Failure(code: .noSuchTask, message: "'\(target)' is ambiguous; it matches \(list("matches"))")
        case SchedulerInterface.permissionDenied:
            return Failure(code: .permissionDenied, message: "permission denied: \(p["reason"]?.stringValue ?? "")")
        case SchedulerInterface.shuttingDown:
            return Failure(code: .unreachable, message: "taskd is shutting down")
        default:
            return Failure(code: .usage, message: "taskd refused the request: \(name) \(JSONValue.object(p))")
        }
    }

    static func wake(_ parameters: [String: JSONValue], wait: Bool, json: Bool, socket: String) throws(Failure)
        -> ExitCode
    {
        var shown: [String: String] = [:]
        let reply = try call(socket, SchedulerInterface.wake, parameters, more: wait) { reply in
            guard wait, !json, reply.error == nil else { return }
            for run in runs(reply) where shown[run.runId] != run.state {
                if shown[run.runId] == nil || run.hasEnded { Terminal.out(describe(run)) }
                shown[run.runId] = run.state
            }
        }
        let final = runs(reply)
        if json {
            Terminal.out(JSONValue.array(final.map(\.json)).description)
        } else if !wait {
            final.forEach { Terminal.out(describe($0)) }
        }
        if wait && !final.allSatisfy({ $0.state == RunOutcome.completed.rawValue }) { return .runDidNotComplete }
        return .success
    }

    static func runs(_ reply: VarlinkReply) -> [RunInfo] {
        (reply.parameters["runs"]?.arrayValue ?? []).compactMap(RunInfo.init(json:))
    }

    /// One line about a run: what it is doing, or how it ended.
    static func describe(_ run: RunInfo) -> String {
        let head = "\(run.task): run \(run.runId)"
        if !run.hasEnded {
            return run.coalesced
                ? "\(head) already \(run.state) (trigger \(run.trigger)); this wake joined it"
                : "\(head) \(run.state) (trigger \(run.trigger), budget \(Terminal.span(run.budgetUSec)))"
        }
        var text = "\(head) \(run.state)"
        if let d = run.durationUSec { text += " in \(Terminal.span(d))" }
        var details: [String] = []
        if let code = run.exitStatus, code != 0 { details.append("exit status \(code)") }
        if let s = run.signal { details.append(s) }
        if let r = run.cancelReason { details.append("cancel reason \(r)") }
        if let e = run.error { details.append(e) }
        if !details.isEmpty { text += " (" + details.joined(separator: ", ") + ")" }
        return text
    }

    static func list(json: Bool, socket: String) throws(Failure) -> ExitCode {
        let reply = try call(socket, SchedulerInterface.list)
        let tasks = (reply.parameters["tasks"]?.arrayValue ?? []).compactMap(TaskInfo.init(json:))
        if json {
            Terminal.out(JSONValue.array(tasks.map(\.json)).description)
            return .success
        }
        let now = Terminal.nowUSec()
        var rows = [["NAME", "KIND", "HANDLER", "STATE", "NEXT", "LEFT", "LAST", "PASSED", "OUTCOME"]]
        for t in tasks {
            let next = t.nextElapseUSec
            let last = t.last
            rows.append([
                t.name, t.kind, t.handler, t.current?.state ?? "idle",
                next.map(Terminal.time) ?? "-",
                next.map { $0 > now ? Terminal.span($0 - now, coarse: true) : "now" } ?? "-",
                last.map { Terminal.time($0.startedUSec) } ?? "-",
                last.map { now > $0.startedUSec ? Terminal.span(now - $0.startedUSec, coarse: true) + " ago" : "now" }
                    ?? "-",
                last?.state ?? "-",
            ])
        }
        Terminal.out(Terminal.table(rows))
        Terminal.out("\n\(tasks.count) task(s).")
        return .success
    }

    static func status(_ name: String, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let reply = try call(socket, SchedulerInterface.status, ["name": .string(name)])
        guard let task = reply.parameters["task"].flatMap(TaskInfo.init(json:)) else {
            throw Failure(code: .unreachable, message: "taskd sent a malformed Status reply")
        }
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
            "        State: "
                + (task.current.map { "\($0.state), run \($0.runId) since \(Terminal.time($0.startedUSec))" } ?? "idle")
        )
        lines.append("     Next run: " + (task.nextElapseUSec.map(Terminal.time) ?? "only when woken"))
        lines.append(
            "     Last run: " + (task.last.map { describe($0) + " at \(Terminal.time($0.startedUSec))" } ?? "never"))
        Terminal.out(lines.joined(separator: "\n"))
        return .success
    }

    static func cancel(_ target: String, json: Bool, socket: String) throws(Failure) -> ExitCode {
        let cancelled = runs(try call(socket, SchedulerInterface.cancel, ["target": .string(target)]))
        if json {
            Terminal.out(JSONValue.array(cancelled.map(\.json)).description)
        } else if cancelled.isEmpty {
            Terminal.out("\(target): no run in progress")
        } else {
            cancelled.forEach { Terminal.out("\($0.task): run \($0.runId) \($0.state)") }
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
