import TaskScheduling
import TaskdIO
import TaskdProtocol

/// The method table: a row per method of both interfaces, its typed parameters to the scheduler's
/// request, its result to its typed reply. A new method is a row here (or, for one a component of
/// the scheduler serves, among its rows), its `VarlinkMethod` type, its IDL text and taskctl's command.
extension ControlService {
    typealias Row = MethodRow<Scheduler>

    static func table(info: VarlinkServiceInterface.GetInfo.Reply) -> [Row] {
        [
            Row(VarlinkServiceInterface.GetInfo.self) { _, call, _ in call.reply(info) },
            Row(VarlinkServiceInterface.GetInterfaceDescription.self) { p, call, _ in
                guard let description = descriptions[p.interface] else {
                    throw VarlinkError(VarlinkServiceInterface.interfaceNotFound, ["interface": .string(p.interface)])
                }
                call.reply(.init(description: description))
            },
            Row(SchedulerInterface.Wake.self, wake),
            Row(SchedulerInterface.List.self) { _, call, scheduler in call.reply(.init(tasks: scheduler.list())) },
            Row(SchedulerInterface.Status.self) { p, call, scheduler in
                call.reply(.init(task: try scheduler.status(name: p.name)))
            },
            Row(SchedulerInterface.History.self) { p, call, scheduler in
                call.reply(.init(runs: try scheduler.history(name: p.name, limit: p.limit ?? 20)))
            },
            Row(SchedulerInterface.Follow.self, follow),
            Row(SchedulerInterface.Reload.self) { _, call, scheduler in
                try scheduler.checkAdmin(call.peer)
                // Off the loop: it reads files.
                Task(executorPreference: EventLoop.shared) { await reload(scheduler, call) }
            },
            Row(SchedulerInterface.Cancel.self) { p, call, scheduler in
                call.reply(.init(runs: try scheduler.cancel(target: p.target, peer: call.peer)))
            },
            Row(SchedulerInterface.Pause.self) { p, call, scheduler in
                let tasks = try scheduler.pause(
                    target: p.target, until: p.untilUSec, note: p.note ?? "", peer: call.peer)
                call.reply(.init(tasks: tasks))
            },
            Row(SchedulerInterface.Resume.self) { p, call, scheduler in
                call.reply(.init(tasks: try scheduler.resume(target: p.target, peer: call.peer)))
            },
            Row(SchedulerInterface.Why.self, why),
            Row(SchedulerInterface.Metrics.self) { _, call, scheduler in
                call.reply(.init(text: String(decoding: scheduler.metrics(prometheus: false), as: UTF8.self)))
            },
        ]
    }

    /// The IDL of each interface served.
    static var descriptions: [String: String] {
        [
            SchedulerInterface.name: SchedulerInterface.description,
            VarlinkServiceInterface.name: VarlinkServiceInterface.description,
        ]
    }

    /// Starts the runs (or joins them); with `more`, follows them to their ends.
    static func wake(
        _ p: SchedulerInterface.Wake.Parameters, _ call: MethodCall<RunsReply>, _ scheduler: isolated Scheduler
    ) throws {
        let payload = p.payload.map { JSONValue.object($0).description }
        if call.more {
            let follower = RunFollower(call)
            try scheduler.wake(
                target: p.target, id: p.id, payload: payload, peer: call.peer, watch: follower.update,
                followRetries: p.followRetries ?? true, reply: follower.acknowledged)
        } else {
            try scheduler.wake(
                target: p.target, id: p.id, payload: payload, peer: call.peer, watch: nil, followRetries: true
            ) { runs in call.reply(RunsReply(runs: runs)) }
        }
    }

    /// Follows runs by id: their states now, and with `more` every later one to their ends.
    static func follow(
        _ p: SchedulerInterface.Follow.Parameters, _ call: MethodCall<RunsReply>, _ scheduler: isolated Scheduler
    ) throws {
        guard call.more else {
            return call.reply(RunsReply(runs: try scheduler.follow(runIDs: p.runIds, watch: nil, followRetries: true)))
        }
        let follower = RunFollower(call)
        let runs = try scheduler.follow(
            runIDs: p.runIds, watch: follower.update, followRetries: p.followRetries ?? true)
        follower.acknowledged(runs)
    }

    /// Why the task is not running, each reason with the journal's MESSAGE_ID for it.
    static func why(
        _ p: SchedulerInterface.Why.Parameters, _ call: MethodCall<SchedulerInterface.Why.Reply>,
        _ scheduler: isolated Scheduler
    ) throws {
        let (key, reasons) = try scheduler.why(name: p.name)
        let infos = reasons.map { reason, id in
            WhyReasonInfo(
                code: reason.code.rawValue, text: reason.text, runId: reason.runID, atUSec: reason.at,
                messageId: id?.rawValue)
        }
        call.reply(.init(task: key.description, reasons: infos))
    }

    /// Reloads the configuration and answers with what changed.
    static func reload(_ scheduler: Scheduler, _ call: MethodCall<SchedulerInterface.Reload.Reply>) async {
        switch await scheduler.reload() {
        case .success(let diff):
            func names(_ keys: [TaskKey]) -> [String] { keys.map(\.description) }
            call.reply(
                .init(
                    added: names(diff.added), removed: names(diff.removed), changed: names(diff.changed),
                    unchanged: diff.unchanged.count))
        case .failure(let failure):
            call.fail(
                VarlinkError(
                    SchedulerInterface.invalidConfiguration, ["errors": .array(failure.errors.map { .string($0) })]))
        }
    }
}
