import TaskScheduling
import TaskdProtocol

/// Answers Varlink calls on the control socket, `org.varlink.service` and `io.taskd.Scheduler`,
/// through its method table (`ControlService+Methods`), driving a `SchedulerControl`. Every call
/// is logged with the peer's pid/uid/gid from SO_PEERCRED.
public struct ControlService<Scheduler: SchedulerControl>: Sendable {
    public let scheduler: Scheduler
    let log: any ControlLog
    /// Method name → its row.
    let methods: [String: MethodRow<Scheduler>]

    /// `product` and `version` are what `GetInfo` reports: the daemon's name and its app's version;
    /// `rows` are the methods the scheduler's components serve, beside the table's.
    public init(
        scheduler: Scheduler, log: any ControlLog, product: String, version: String, rows: [MethodRow<Scheduler>] = []
    ) {
        self.scheduler = scheduler
        self.log = log
        let info = VarlinkServiceInterface.GetInfo.Reply(
            vendor: "taskd", product: product, version: version, url: "file:///usr/share/doc/taskd/README.md",
            interfaces: [VarlinkServiceInterface.name, SchedulerInterface.name])
        methods = Dictionary(uniqueKeysWithValues: (Self.table(info: info) + rows).map { ($0.name, $0) })
    }

    /// The names of the methods served, sorted.
    public var methodNames: [String] { methods.keys.sorted() }

    /// Serves one call, on the event loop's thread that read it (the scheduler's executor): every
    /// method but `Reload` is decided there and then, with no task and no hop, so a wake's handler
    /// starts before this returns. A reply may follow later (a wake's once it is on disk, a
    /// `Reload`'s once loaded, a followed wake's as its runs change); `channel` keeps them in order.
    public func handle(_ call: VarlinkCall, on channel: some ReplyChannel) {
        log.request(call.method, from: channel.peer)
        do {
            try scheduler.isolatedOnLoop { scheduler in
                try scheduler.checkAccess(channel.peer)
                guard let row = methods[call.method] else { throw Self.unknown(call.method) }
                try row.serve(call, channel, scheduler)
            }
        } catch {
            answer(error, to: call, on: channel)
        }
    }

    /// The error for a method no row serves: of a known interface, or of an unknown one.
    static func unknown(_ method: String) -> VarlinkError {
        let interface = method.split(separator: ".").dropLast().joined(separator: ".")
        if interface == SchedulerInterface.name || interface == VarlinkServiceInterface.name {
            return VarlinkError(
                VarlinkServiceInterface.methodNotFound, ["method": .string(method)], rejection: "no such method")
        }
        return VarlinkError(
            VarlinkServiceInterface.interfaceNotFound, ["interface": .string(interface)], rejection: "no such interface"
        )
    }

    /// Answers a call that failed with the error its interface names.
    private func answer(_ error: any Error, to call: VarlinkCall, on channel: some ReplyChannel) {
        let failure: VarlinkError
        switch error {
        case TargetError.noSuchTask(let target, let known):
            failure = VarlinkError(
                SchedulerInterface.noSuchTask, ["target": .string(target), "known": .array(known.map { .string($0) })])
        case TargetError.ambiguous(let target, let matches):
            failure = VarlinkError(
                SchedulerInterface.ambiguousTarget,
                ["target": .string(target), "matches": .array(matches.map { .string($0) })])
        case let error as ParameterError:
            failure = VarlinkError(
                VarlinkServiceInterface.invalidParameter, ["parameter": .string(error.name)],
                rejection: "invalid parameter '\(error.name)': \(error.reason)")
        case let error as any VarlinkErrorConvertible:
            failure = error.varlinkError
        default:
            failure = VarlinkError(SchedulerInterface.invalidRequest, ["reason": .string("\(error)")])
        }
        if let reason = failure.rejection { log.rejected(call.method, from: channel.peer, reason: reason) }
        channel.send(.error(failure.name, failure.parameters))
    }
}

/// Where the control service tells of its calls: every request (debug), and every one it rejects.
public protocol ControlLog: Sendable {
    func request(_ method: String, from peer: PeerCredentials)
    func rejected(_ method: String, from peer: PeerCredentials, reason: String)
}
