import TaskScheduling
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `taskctl wake`: the wake, following its runs (`--wait`, `--events`) through an upgrade in place,
/// and how a run is told.
extension Commands {
    static func wake(
        _ parameters: SchedulerInterface.Wake.Parameters, wait: Bool, json: Bool, events: Bool = false, socket: String
    ) throws(Failure) -> ExitCode {
        var shown: [String: RunState] = [:]
        var latest: [RunInfo] = []
        let live = LiveLine(enabled: wait && !json && !events && isatty(1) == 1)
        let onReply = { (reply: RunsReply, continues: Bool) in
            latest = reply.runs
            guard wait else { return }
            if events {
                let runs = JSONValue.array(reply.runs.map(\.json))
                Terminal.out(JSONValue.object(["runs": runs, "final": .bool(!continues)]).description)
                return
            }
            guard !json else { return }
            for run in reply.runs where shown[run.runId] != run.state {
                if shown[run.runId] == nil || run.hasEnded { live.print(describe(run)) }
                shown[run.runId] = run.state
            }
            live.show(reply.runs.filter { !$0.hasEnded }.compactMap(progressLine).joined(separator: "; "))
        }
        var reply: RunsReply
        do {
            reply = try call(socket, SchedulerInterface.Wake.self, parameters, more: wait, onReply: onReply)
        } catch  where wait && !latest.isEmpty && error.code == .unreachable {
            reply = try follow(latest, socket: socket, onReply: onReply)
        }
        live.print(nil)
        let final = reply.runs
        if events {
            // Every reply was printed as it came.
        } else if json {
            Terminal.out(JSONValue.array(final.map(\.json)).description)
        } else if !wait {
            final.forEach { Terminal.out(describe($0)) }
        }
        if final.contains(where: { $0.disposition.isDropped }) { return .runDidNotComplete }
        if wait && !final.allSatisfy({ $0.state == .completed }) { return .runDidNotComplete }
        return .success
    }

    /// Follows `runs` again after the connection that followed them closed (an upgrade in place
    /// re-executed taskd): `Follow` by run id, tried again for up to 30 s while taskd does not answer.
    /// Each reply keeps the disposition the wake was told.
    static func follow(
        _ runs: [RunInfo], socket: String, onReply: (RunsReply, Bool) -> Void
    ) throws(Failure) -> RunsReply {
        let dispositions = Dictionary(runs.map { ($0.runId, $0.disposition) }) { a, _ in a }
        func told(_ reply: RunsReply) -> RunsReply {
            RunsReply(
                runs: reply.runs.map { run in
                    var run = run
                    run.disposition = dispositions[run.runId] ?? run.disposition
                    return run
                })
        }
        let deadline = Terminal.nowUSec() + 30_000_000
        while true {
            do {
                let parameters = SchedulerInterface.Follow.Parameters(runIds: runs.map(\.runId))
                return told(
                    try call(socket, SchedulerInterface.Follow.self, parameters, more: true) { onReply(told($0), $1) })
            } catch  where error.code == .unreachable && Terminal.nowUSec() < deadline {
                usleep(20_000)
            }
        }
    }

    /// A running run's progress and status, `appRefresh: 3/250 (1%), fetching page 4`; nil without any.
    static func progressLine(_ run: RunInfo) -> String? {
        let count = run.progressCompleted.map { completed in
            guard let total = run.progressTotal, total > 0 else { return "\(completed)" }
            return "\(completed)/\(total) (\(min(100, max(0, completed * 100 / total)))%)"
        }
        let parts = [count, run.status].compactMap { $0 }
        return parts.isEmpty ? nil : "\(run.task): " + parts.joined(separator: ", ")
    }

    /// One line about a run: what it is doing, or how it ended.
    /// `on HOST (fence N)`: the host of the fleet that holds or ran the run's claim, if any.
    static func fleetDetail(_ run: RunInfo) -> String? {
        run.fleetHost.map { "on \($0)" + (run.fenceToken.map { " (fence \($0))" } ?? " (unclaimed)") }
    }

    static func describe(_ run: RunInfo) -> String {
        let head = "\(run.task): run \(run.runId)"
        if run.disposition == .refused {
            return "\(run.task): wake refused: the queue is full (QueueLimit=) and its payload differs from "
                + "that of the last queued run, \(run.runId)"
        }
        if run.disposition == .skipped {
            return "\(run.task): skipped: run \(run.runId) is in progress and the task has Overlap=skip"
        }
        if run.disposition == .paused {
            return
                "\(run.task): paused: the wake was recorded (run \(run.runId)) and not run; taskctl resume \(run.task)"
        }
        if !run.hasEnded {
            switch run.disposition {
            case .coalesced:
                return "\(head) already \(run.state.rawValue) (trigger \(run.trigger.rawValue)); this wake joined it"
            case .overflow: return "\(head) queued; the queue is full, so this wake joined the last queued run"
            case .queued:
                return
                    "\(head) queued behind the run in progress (Overlap=queue, allow at MaxInstances=, or a payload unlike that run's)"
            case .started where run.waitingFor != nil:
                return "\(head) waiting: \(run.waitingFor!) (trigger \(run.trigger.rawValue))"
            case .started, .refused, .skipped, .paused:
                let attempt = run.attempt > 1 ? ", attempt \(run.attempt)" : ""
                let budget = Terminal.span(run.budgetUSec)
                return "\(head) \(run.state.rawValue) (trigger \(run.trigger.rawValue)\(attempt), budget \(budget))"
            }
        }
        var text = "\(head) \(run.state.rawValue)"
        if let d = run.durationUSec { text += " in \(Terminal.span(d))" }
        var details: [String] = []
        if run.attempt > 1 { details.append("attempt \(run.attempt)") }
        if let code = run.exitStatus, code != 0 { details.append("exit status \(code)") }
        if let s = run.signal { details.append(s) }
        if let r = run.cancelReason { details.append("cancel reason \(r)") }
        if let e = run.error { details.append(e) }
        if run.stale { details.append("stale result ignored") }
        if run.partial { details.append("done partially, not retried") }
        if let fleet = fleetDetail(run) { details.append(fleet) }
        if let delay = run.retryInUSec {
            details.append("retry \(run.attempt + 1) in \(Terminal.span(delay))")
        }
        if !details.isEmpty { text += " (" + details.joined(separator: ", ") + ")" }
        if let result = run.result { text += ": " + result.description }
        if run.hasEnded, let progress = progressLine(run) {
            text += " [last progress " + progress.dropFirst(run.task.count + 2) + "]"
        }
        return text
    }
}
