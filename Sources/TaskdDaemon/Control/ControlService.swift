import TaskScheduling
import TaskdIO
import TaskdProtocol
import TaskdSystem

/// Answers Varlink calls on the control socket: `org.varlink.service` and `io.taskd.Scheduler`.
/// Every call is journaled (debug) with the peer's pid/uid/gid from SO_PEERCRED.
struct ControlService: Sendable {
    let daemon: Daemon
    let journal: EventJournal
    /// What `GetInfo` reports as product and version: the daemon's name and its app's version.
    var product = "taskd"
    var version = TaskdVersion.current

    init(daemon: Daemon, journal: EventJournal, product: String = "taskd", version: String = TaskdVersion.current) {
        self.daemon = daemon
        self.journal = journal
        self.product = product
        self.version = version
    }

    /// Serves one call, on the event loop's thread that read it (the daemon's executor): every
    /// method but `Reload` is decided there and then, with no task and no hop, so a wake's handler
    /// starts before this returns. A reply may follow later (a wake's once it is on disk, a
    /// `Reload`'s once loaded, a followed wake's as its runs change); `channel` keeps them in order.
    func handle(_ call: VarlinkCall, on channel: some ReplyChannel) {
        journalRequest(call, from: channel.peer)
        do {
            try daemon.isolatedOnLoop { daemon in
                try daemon.checkAccess(channel.peer)
                try dispatch(call, on: channel, daemon: daemon)
            }
        } catch {
            answer(error, to: call, on: channel)
        }
    }

    /// `Wake`'s parameters: the target, the wake id and the payload.
    private static func wakeArguments(_ p: Parameters) throws -> (target: String, id: String?, payload: JSONValue?) {
        try p.only(["target", "id", "payload", "followRetries"])
        return (try p.string("target"), try p.optionalString("id"), try p.optionalObject("payload"))
    }

    /// The reply that tells runs (`Wake`, `Cancel`).
    static func reply(_ runs: [RunInfo], continues: Bool = false) -> VarlinkReply {
        var parameters = JSONObjectWriter()
        parameters.json("runs", JSONObjectWriter.array(runs.map(\.encodedJSON)))
        return VarlinkReply(encodedParameters: parameters.finish(), continues: continues)
    }

    private func journalRequest(_ call: VarlinkCall, from peer: PeerCredentials) {
        let method = call.method
        journal.daemon(.request, 7) {
            (
                "request \(method) from \(peer)",
                [
                    ("REQUEST_METHOD", method), ("PEER_PID", String(peer.pid)), ("PEER_UID", String(peer.uid)),
                    ("PEER_GID", String(peer.gid)),
                ]
            )
        }
    }

    /// Answers a call that failed with the error its interface names.
    private func answer(_ error: any Error, to call: VarlinkCall, on channel: some ReplyChannel) {
        let peer = channel.peer
        switch error {
        case TargetError.noSuchTask(let target, let known):
            channel.send(
                .error(
                    SchedulerInterface.noSuchTask,
                    ["target": .string(target), "known": .array(known.map { .string($0) })]
                ))
        case TargetError.ambiguous(let target, let matches):
            channel.send(
                .error(
                    SchedulerInterface.ambiguousTarget,
                    ["target": .string(target), "matches": .array(matches.map { .string($0) })]))
        case let error as ParameterError:
            reject(call, peer: peer, reason: "invalid parameter '\(error.name)': \(error.reason)")
            channel.send(.error(VarlinkServiceInterface.invalidParameter, ["parameter": .string(error.name)]))
        case DaemonError.permissionDenied(let reason):
            reject(call, peer: peer, reason: "permission denied: \(reason)")
            channel.send(.error(SchedulerInterface.permissionDenied, ["reason": .string(reason)]))
        case DaemonError.shuttingDown:
            channel.send(.error(SchedulerInterface.shuttingDown))
        default:
            channel.send(.error(SchedulerInterface.invalidRequest, ["reason": .string("\(error)")]))
        }
    }

    private func reject(_ call: VarlinkCall, peer: PeerCredentials, reason: String) {
        journal.daemon(
            .requestRejected, 4, "rejected \(call.method) from \(peer): \(reason)",
            [("REQUEST_METHOD", call.method), ("PEER_PID", String(peer.pid)), ("PEER_UID", String(peer.uid))])
    }

    private func dispatch(_ call: VarlinkCall, on channel: some ReplyChannel, daemon: isolated Daemon) throws {
        let p = Parameters(call.parameters)
        switch call.method {
        case VarlinkServiceInterface.getInfo:
            try p.only([])
            channel.send(
                VarlinkReply(parameters: [
                    "vendor": "taskd", "product": .string(product), "version": .string(version),
                    "url": "file:///usr/share/doc/taskd/README.md",
                    "interfaces": .array([.string(VarlinkServiceInterface.name), .string(SchedulerInterface.name)]),
                ]))
        case VarlinkServiceInterface.getInterfaceDescription:
            try p.only(["interface"])
            let name = try p.string("interface")
            switch name {
            case SchedulerInterface.name:
                channel.send(VarlinkReply(parameters: ["description": .string(SchedulerInterface.description)]))
            case VarlinkServiceInterface.name:
                channel.send(VarlinkReply(parameters: ["description": .string(VarlinkServiceInterface.description)]))
            default:
                channel.send(.error(VarlinkServiceInterface.interfaceNotFound, ["interface": .string(name)]))
            }
        case SchedulerInterface.wake:
            let (target, id, payload) = try Self.wakeArguments(p)
            if call.more {
                let follower = RunFollower(channel)
                try daemon.wake(
                    target: target, id: id, payload: payload?.description, peer: channel.peer, watch: follower.update,
                    followRetries: try p.optionalBool("followRetries") ?? true, reply: follower.acknowledged)
            } else {
                try daemon.wake(target: target, id: id, payload: payload?.description, peer: channel.peer) { runs in
                    channel.send(Self.reply(runs))
                }
            }
        case SchedulerInterface.list:
            try p.only([])
            let tasks = daemon.list()
            channel.send(VarlinkReply(parameters: ["tasks": .array(tasks.map(\.json))]))
        case SchedulerInterface.status:
            try p.only(["name"])
            let info = try daemon.status(name: try p.string("name"))
            channel.send(VarlinkReply(parameters: ["task": info.json]))
        case SchedulerInterface.history:
            try p.only(["name", "limit"])
            let name = try p.string("name")
            let limit = try p.optionalInt("limit", in: 1...10_000) ?? 20
            let runs = try daemon.history(name: name, limit: limit)
            channel.send(Self.reply(runs))
        case SchedulerInterface.reload:
            try p.only([])
            try daemon.checkAdmin(channel.peer)
            Task(executorPreference: EventLoop.shared) { await reload(on: channel) }
        case SchedulerInterface.cancel:
            try p.only(["target"])
            let runs = try daemon.cancel(target: try p.string("target"), peer: channel.peer)
            channel.send(Self.reply(runs))
        case SchedulerInterface.pause:
            try p.only(["target", "untilUSec", "note"])
            let until = try p.optionalInt("untilUSec", in: 0...Int.max).map { UInt64($0) }
            let tasks = try daemon.pause(
                target: try p.string("target"), until: until, note: try p.optionalString("note") ?? "",
                peer: channel.peer)
            channel.send(VarlinkReply(parameters: ["tasks": .array(tasks.map { .string($0) })]))
        case SchedulerInterface.resume:
            try p.only(["target"])
            let tasks = try daemon.resume(target: try p.string("target"), peer: channel.peer)
            channel.send(VarlinkReply(parameters: ["tasks": .array(tasks.map { .string($0) })]))
        case SchedulerInterface.why:
            try p.only(["name"])
            let (key, reasons) = try daemon.why(name: try p.string("name"))
            let items: [JSONValue] = reasons.map { reason, id in
                var o: [String: JSONValue] = ["code": .string(reason.code.rawValue), "text": .string(reason.text)]
                if let run = reason.runID { o["runId"] = .string(run) }
                if let at = reason.at { o["atUSec"] = .int(Int64(clamping: at)) }
                if let id { o["messageId"] = .string(id.rawValue) }
                return .object(o)
            }
            channel.send(VarlinkReply(parameters: ["task": .string(key.description), "reasons": .array(items)]))
        case SchedulerInterface.metrics:
            try p.only([])
            channel.send(VarlinkReply(parameters: ["text": .string(String(decoding: daemon.metrics(), as: UTF8.self))]))
        default:
            let interface = call.method.split(separator: ".").dropLast().joined(separator: ".")
            if interface == SchedulerInterface.name || interface == VarlinkServiceInterface.name {
                reject(call, peer: channel.peer, reason: "no such method")
                channel.send(.error(VarlinkServiceInterface.methodNotFound, ["method": .string(call.method)]))
            } else {
                reject(call, peer: channel.peer, reason: "no such interface")
                channel.send(.error(VarlinkServiceInterface.interfaceNotFound, ["interface": .string(interface)]))
            }
        }
    }

    /// Reloads the configuration (off the loop: it reads files) and answers with what changed.
    private func reload(on channel: some ReplyChannel) async {
        switch await daemon.reload() {
        case .success(let diff):
            func names(_ keys: [TaskKey]) -> JSONValue { .array(keys.map { .string($0.description) }) }
            channel.send(
                VarlinkReply(parameters: [
                    "added": names(diff.added), "removed": names(diff.removed), "changed": names(diff.changed),
                    "unchanged": .int(Int64(diff.unchanged.count)),
                ]))
        case .failure(let failure):
            channel.send(
                .error(
                    SchedulerInterface.invalidConfiguration, ["errors": .array(failure.errors.map { .string($0) })])
            )
        }
    }
}
