import TaskScheduling
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

    /// Serves one connection's calls in order until the client hangs up.
    func serve(_ connection: ControlConnection) async {
        for await call in connection.calls {
            await handle(call, on: connection)
        }
    }

    func handle(_ call: VarlinkCall, on channel: some ReplyChannel) async {
        journalRequest(call, from: channel.peer)
        do {
            try await daemon.checkAccess(channel.peer)
            try await dispatch(call, on: channel)
        } catch {
            answer(error, to: call, on: channel)
        }
    }

    /// Serves a plain wake (no `more`, not oneway) at once, on the event loop's thread that read it:
    /// no task and no hop before its handler starts; the reply leaves once the wake is on disk.
    /// Returns false for any other call, which `handle` then serves.
    func handleOnLoop(_ call: VarlinkCall, on channel: some ReplyChannel) -> Bool {
        guard call.method == SchedulerInterface.wake, !call.more, !call.oneway else { return false }
        journalRequest(call, from: channel.peer)
        do {
            try daemon.isolatedOnLoop { daemon in
                try daemon.checkAccess(channel.peer)
                let (target, id, payload) = try Self.wakeArguments(Parameters(call.parameters))
                try daemon.wake(target: target, id: id, payload: payload?.description, peer: channel.peer) { runs in
                    channel.send(Self.reply(runs))
                }
            }
        } catch {
            answer(error, to: call, on: channel)
        }
        return true
    }

    /// `Wake`'s parameters: the target, the wake id and the payload.
    private static func wakeArguments(_ p: Parameters) throws -> (target: String, id: String?, payload: JSONValue?) {
        try p.only(["target", "id", "payload"])
        return (try p.string("target"), try p.optionalString("id"), try p.optionalObject("payload"))
    }

    /// The reply that tells runs (`Wake`, `Cancel`).
    private static func reply(_ runs: [RunInfo], continues: Bool = false) -> VarlinkReply {
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

    private func dispatch(_ call: VarlinkCall, on channel: some ReplyChannel) async throws {
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
            try await wake(target: target, id: id, payload: payload, more: call.more, on: channel)
        case SchedulerInterface.list:
            try p.only([])
            let tasks = await daemon.list()
            channel.send(VarlinkReply(parameters: ["tasks": .array(tasks.map(\.json))]))
        case SchedulerInterface.status:
            try p.only(["name"])
            let info = try await daemon.status(name: try p.string("name"))
            channel.send(VarlinkReply(parameters: ["task": info.json]))
        case SchedulerInterface.history:
            try p.only(["name", "limit"])
            let name = try p.string("name")
            let limit = try p.optionalInt("limit", in: 1...10_000) ?? 20
            let runs = try await daemon.history(name: name, limit: limit)
            channel.send(Self.reply(runs))
        case SchedulerInterface.reload:
            try p.only([])
            try await daemon.checkAdmin(channel.peer)
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
        case SchedulerInterface.cancel:
            try p.only(["target"])
            let runs = try await daemon.cancel(target: try p.string("target"), peer: channel.peer)
            channel.send(Self.reply(runs))
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

    private func wake(target: String, id: String?, payload: JSONValue?, more: Bool, on channel: some ReplyChannel)
        async throws
    {
        let (runs, updates) = try await daemon.wake(
            target: target, id: id, payload: payload?.description, watch: more, peer: channel.peer)
        guard more, let updates else {
            channel.send(Self.reply(runs))
            return
        }
        var latest = runs
        func reply() {
            let done = latest.allSatisfy(\.hasEnded)
            channel.send(Self.reply(latest, continues: !done))
        }
        reply()
        if latest.allSatisfy(\.hasEnded) { return }
        for await update in updates {
            guard let index = latest.firstIndex(where: { $0.runId == update.runId }) else { continue }
            var info = update
            info.disposition = latest[index].disposition
            if info.state == latest[index].state { continue }
            latest[index] = info
            if channel.isClosed { return }
            reply()
            if latest.allSatisfy(\.hasEnded) { return }
        }
    }
}
