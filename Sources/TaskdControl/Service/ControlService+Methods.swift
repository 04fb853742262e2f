import TaskScheduling
import TaskdIO
import TaskdProtocol

/// The method table: a row per method of both interfaces, its typed parameters to the scheduler's
/// request, its result to its typed reply. A new method is a row here, its `VarlinkMethod` type,
/// its IDL text and taskctl's command.
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
            Row(SchedulerInterface.Submit.self) { p, call, scheduler in
                // Off the loop's turn: the file is written and synced first.
                Task(executorPreference: EventLoop.shared) { await submit(p, call, scheduler) }
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
            Row(SchedulerInterface.Drain.self) { p, call, scheduler in
                try scheduler.drain(timeout: p.timeoutUSec, peer: call.peer) { drained, runs in
                    call.reply(.init(drained: drained, runs: runs))
                }
            },
            Row(SchedulerInterface.EndDrain.self) { _, call, scheduler in
                call.reply(.init(waiting: try scheduler.endDrain(peer: call.peer)))
            },
            Row(SchedulerInterface.Upgrade.self) { _, call, scheduler in
                try scheduler.upgrade(peer: call.peer) { result in
                    switch result {
                    case .success(let reply): call.reply(reply)
                    case .failure(let failure):
                        call.fail(VarlinkError(SchedulerInterface.upgradeFailed, ["reason": .string(failure.reason)]))
                    }
                }
            },
            Row(SchedulerInterface.Fleet.self) { _, call, scheduler in
                scheduler.fleet { result in
                    switch result {
                    case .success(let reply): call.reply(reply)
                    case .failure(let failure):
                        call.fail(
                            VarlinkError(SchedulerInterface.fleetUnavailable, ["reason": .string(failure.reason)]))
                    }
                }
            },
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

    /// Adds a submitted task once its file is on disk; a refusal is answered with its error.
    static func submit(
        _ p: SchedulerInterface.Submit.Parameters, _ call: MethodCall<SchedulerInterface.Submit.Reply>,
        _ scheduler: Scheduler
    ) async {
        do {
            call.reply(.init(task: try await scheduler.submit(p, peer: call.peer)))
        } catch let error as any VarlinkErrorConvertible {
            call.fail(error.varlinkError)
        } catch {
            call.fail(VarlinkError(SchedulerInterface.invalidRequest, ["reason": .string("\(error)")]))
        }
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
