import TaskScheduling
import TaskdControl
import TaskdIO
import TaskdProtocol

/// A `SchedulerControl` that answers from fixed data and records what it was asked: the control
/// service's table driven without a daemon. Runs on the event loop, as the daemon does.
actor FakeScheduler: SchedulerControl {
    nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    enum MessageID: String { case paused = "ab12" }
    struct Failure: ConfigurationErrors { var errors: [String] }

    /// The requests heard, as "method argument".
    private(set) var heard: [String] = []
    let tasks: [TaskInfo]

    init(tasks: [TaskInfo] = []) { self.tasks = tasks }

    func checkAccess(_ peer: PeerCredentials) throws {
        if peer.uid == 666 { throw VarlinkError(SchedulerInterface.permissionDenied, ["reason": "no"]) }
    }
    func checkAdmin(_ peer: PeerCredentials) throws {}
    func wake(
        target: String, id: String?, payload: String?, peer: PeerCredentials,
        watch: (@Sendable (RunInfo) -> Void)?, followRetries: Bool, reply: @escaping @Sendable ([RunInfo]) -> Void
    ) throws {
        heard.append("wake \(target) \(payload ?? "-")")
        guard target == "known" else { throw TargetError.noSuchTask(target: target, known: ["processing:known"]) }
        reply([])
    }
    func cancel(target: String, peer: PeerCredentials) throws -> [RunInfo] { [] }
    func submit(_ p: SchedulerInterface.Submit.Parameters, peer: PeerCredentials) async throws -> TaskInfo {
        heard.append("submit \(p.command.joined(separator: " ")) \(p.inUSec ?? 0) \(p.properties ?? [])")
        throw Refusal()
    }
    func pause(target: String, until: UInt64?, note: String, peer: PeerCredentials) throws -> [String] {
        heard.append("pause \(target) \(until ?? 0) \(note)")
        return ["processing:\(target)"]
    }
    func resume(target: String, peer: PeerCredentials) throws -> [String] { [] }
    func why(name: String) throws -> (TaskKey, [(WhyReason, MessageID?)]) {
        (TaskKey(kind: "processing", identifier: name), [(WhyReason(.paused, "paused by hand"), .paused)])
    }
    func drain(timeout: UInt64?, peer: PeerCredentials, reply: @escaping @Sendable (Bool, [RunInfo]) -> Void) throws {
        heard.append("drain \(timeout ?? 0)")
        reply(timeout == nil, [])
    }
    func upgrade(
        peer: PeerCredentials,
        reply: @escaping @Sendable (Result<SchedulerInterface.Upgrade.Reply, UpgradeFailure>) -> Void
    ) throws {
        heard.append("upgrade")
        reply(.failure(UpgradeFailure(reason: "not here")))
    }

    func follow(runIDs: [String], watch: (@Sendable (RunInfo) -> Void)?, followRetries: Bool) throws -> [RunInfo] {
        heard.append("follow \(runIDs.joined(separator: ","))")
        return []
    }

    func endDrain(peer: PeerCredentials) throws -> Int {
        heard.append("endDrain")
        return 2
    }
    func metrics(prometheus: Bool) -> [UInt8] { Array("# EOF\n".utf8) }
    func list() -> [TaskInfo] { tasks }
    func status(name: String) throws -> TaskInfo { tasks[0] }
    func history(name: String, limit: Int) throws -> [RunInfo] {
        heard.append("history \(name) \(limit)")
        return []
    }
    func reload() async -> Result<ReloadDiff, Failure> { .failure(Failure(errors: ["a.task:1: bad"])) }

    /// The rows of the methods a daemon's components serve (`ControlService`'s `rows`), served here
    /// by the fake's own methods: Submit, Drain, EndDrain, Upgrade and Fleet.
    static var componentRows: [MethodRow<FakeScheduler>] {
        [
            MethodRow(SchedulerInterface.Submit.self) { p, call, scheduler in
                Task(executorPreference: EventLoop.shared) {
                    do {
                        call.reply(.init(task: try await scheduler.submit(p, peer: call.peer)))
                    } catch {
                        call.fail((error as? any VarlinkErrorConvertible)?.varlinkError ?? Refusal().varlinkError)
                    }
                }
            },
            MethodRow(SchedulerInterface.Drain.self) { p, call, scheduler in
                try scheduler.drain(timeout: p.timeoutUSec, peer: call.peer) { drained, runs in
                    call.reply(.init(drained: drained, runs: runs))
                }
            },
            MethodRow(SchedulerInterface.EndDrain.self) { _, call, scheduler in
                call.reply(.init(waiting: try scheduler.endDrain(peer: call.peer)))
            },
            MethodRow(SchedulerInterface.Upgrade.self) { _, call, scheduler in
                try scheduler.upgrade(peer: call.peer) { result in
                    if case .failure(let failure) = result {
                        call.fail(VarlinkError(SchedulerInterface.upgradeFailed, ["reason": .string(failure.reason)]))
                    }
                }
            },
            MethodRow(SchedulerInterface.Fleet.self) { _, call, _ in
                call.reply(.init(name: nil, host: nil, hosts: [], claims: []))
            },
        ]
    }

    nonisolated func isolatedOnLoop<T: Sendable>(_ body: (isolated FakeScheduler) throws -> T) rethrows -> T {
        try assumeIsolated(body)
    }

    /// Serves `call` through `service` on the actor's executor, as the socket's reader does.
    func serve(_ call: VarlinkCall, with service: ControlService<FakeScheduler>, on channel: some ReplyChannel) {
        service.handle(call, on: channel)
    }
}

/// What the fake refuses with: a permission denied, as the daemon's refusals come.
struct Refusal: VarlinkErrorConvertible {
    var varlinkError: VarlinkError {
        VarlinkError(
            SchedulerInterface.permissionDenied, ["reason": "the fake says no"], rejection: "permission denied")
    }
}
