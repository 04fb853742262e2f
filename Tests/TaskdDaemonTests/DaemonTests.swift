import Foundation
import TaskScheduling
import TaskdControl
import TaskdIO
import TaskdMachine
import TaskdProtocol
import TaskdSystem
import TaskdTestSupport
import Testing

@testable import TaskdConfig
@testable import TaskdDaemon

/// A `Daemon` on a temporary state folder with the given tasks, its journal recorded through the
/// real journal queue: the orchestrator driven by direct calls, without a socket.
final class DaemonFixture {
    let directory = NSTemporaryDirectory() + "taskd-daemon-\(UUID().uuidString)"
    let recorder = LogRecorder()
    let daemon: Daemon
    let journal: EventJournal
    static let root = PeerCredentials(pid: 1, uid: 0, gid: 0)

    init(_ tasks: [TaskDefinition], handlers: [String: TaskHandler] = [:]) async {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        journal = EventJournal(backend: QueuedLogBackend(base: recorder))
        let store = StateStore(directory: directory) { _, _ in }
        var settings = DaemonSettings()
        settings.watchSleep = false  // a unit test takes no inhibitor from the host's logind
        let config = LoadedConfig(daemon: settings, tasks: tasks, diagnostics: [])
        let ports = DaemonPorts(
            clock: SystemClock(),
            commands: ProcessLauncher(journal: journal, stateDirectory: directory, cgroups: nil),
            machine: { ManualMachine().connect($0) }, store: store, journal: journal, loadConfig: { config })
        daemon = Daemon(config: config, handlers: handlers, records: [:], ports: ports)
        await daemon.start(recovering: [])
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    static func command(_ name: String, _ argv: [String], budget: TimeSpan? = nil, grace: TimeSpan = .seconds(60))
        -> TaskDefinition
    {
        TaskDefinition(
            key: TaskKey(kind: "processing", identifier: name), budget: budget, cancelGrace: grace,
            handler: .command(CommandSpec(argv: argv)))
    }

    /// Sends `call` to the control service as the socket would (on the event loop, isolated to the
    /// daemon): its replies, the stream finishing after the final one.
    func call(_ call: VarlinkCall) async -> AsyncStream<VarlinkReply> {
        let channel = RecordingChannel(peer: Self.root)
        let service = ControlService(daemon: daemon, journal: journal)
        await daemon.inside { service.handle(call, on: channel) }
        return channel.replies
    }

    /// The runs a `Wake`/`Cancel` reply tells; throws the reply's error.
    static func runs(_ reply: VarlinkReply) throws -> [RunInfo] {
        if let error = reply.error { throw ReplyError(name: error, parameters: reply.parameters) }
        let decoded = try VarlinkReply(message: reply.encoded)
        return decoded.parameters["runs"]?.arrayValue?.compactMap(RunInfo.init(json:)) ?? []
    }

    /// Wakes `target`: the runs of the first reply, and with `follow` the runs of each later one.
    func wake(_ target: String, payload: JSONValue? = nil, follow: Bool = false) async throws -> (
        runs: [RunInfo], later: AsyncThrowingStream<[RunInfo], any Error>
    ) {
        var parameters: [String: JSONValue] = ["target": .string(target)]
        if let payload { parameters["payload"] = payload }
        let replies = await call(
            VarlinkCall(method: SchedulerInterface.Wake.name, parameters: parameters, more: follow))
        let (later, continuation) = AsyncThrowingStream.makeStream(of: [RunInfo].self, throwing: (any Error).self)
        let first = await withCheckedContinuation { (first: CheckedContinuation<VarlinkReply, Never>) in
            Task {
                var waiting = Optional(first)
                for await reply in replies {
                    if let first = waiting.take() {
                        first.resume(returning: reply)
                        continue
                    }
                    do { continuation.yield(try Self.runs(reply)) } catch { continuation.finish(throwing: error) }
                }
                continuation.finish()
            }
        }
        return (try Self.runs(first), later)
    }

    /// Wakes `target` and follows its runs to their ends; the last state of each run.
    func wakeAndWait(_ target: String, payload: JSONValue? = nil) async throws -> [RunInfo] {
        var (last, later) = try await wake(target, payload: payload, follow: true)
        for try await runs in later { last = runs }
        return last
    }
}

/// A reply channel that records what the service sends.
final class RecordingChannel: ReplyChannel {
    let peer: PeerCredentials
    var isClosed: Bool { false }
    let replies: AsyncStream<VarlinkReply>
    private let continuation: AsyncStream<VarlinkReply>.Continuation

    init(peer: PeerCredentials) {
        self.peer = peer
        (replies, continuation) = AsyncStream.makeStream(of: VarlinkReply.self)
    }

    func send(_ reply: VarlinkReply) {
        continuation.yield(reply)
        if !reply.continues { continuation.finish() }
    }
}

struct ReplyError: Error, Equatable {
    let name: String
    let parameters: [String: JSONValue]
}

extension Daemon {
    /// Runs `body` isolated to the daemon, on the event loop's thread.
    func inside(_ body: @Sendable () -> Void) { body() }
}

@Suite("Daemon: the orchestrator, driven without a socket", .timeLimit(.minutes(1)))
struct DaemonTests {
    @Test("a watched wake runs the command; its output and end are journaled before the watcher hears of the end")
    func wakeRunsACommand() async throws {
        let f = await DaemonFixture([DaemonFixture.command("hello", ["/bin/echo", "hi"])])
        let ended = try await f.wakeAndWait("hello")
        #expect(ended.map(\.state) == [.completed] && ended[0].exitStatus == 0)
        // No flush: the watcher's notice is itself the barrier.
        let entries = f.recorder.run(ended[0].runId)
        #expect(
            entries.map { $0["TASK_STREAM"] ?? $0["MESSAGE_ID"] ?? "?" } == [
                MessageID.runStarted.rawValue, "stdout", MessageID.runCompleted.rawValue,
            ])
        #expect(entries[1].message == "hi")
    }

    @Test("a wake naming no task is refused with the known tasks; nothing is started")
    func unknownTarget() async throws {
        let f = await DaemonFixture([DaemonFixture.command("hello", ["/bin/true"])])
        await #expect(
            throws: ReplyError(
                name: SchedulerInterface.noSuchTask,
                parameters: ["target": "nope", "known": .array([.string("processing:hello")])])
        ) {
            _ = try await f.wake("nope")
        }
        #expect(await f.daemon.list().allSatisfy { $0.current == nil })
    }

    @Test("a Swift handler gets the payload and its result is kept with the run")
    func swiftHandler() async throws {
        let key = TaskKey(kind: "appRefresh", identifier: "echo")
        var definition = TaskDefinition(key: key, handler: .swift)
        definition.overlap = .coalesce
        let handler = TaskHandler { run, _, _ in "{\"got\":\(run.payload ?? "null")}" }
        let f = await DaemonFixture([definition], handlers: ["echo": handler])
        let ended = try await f.wakeAndWait("echo", payload: .object(["n": .int(1)]))
        #expect(ended.map(\.state) == [.completed])
        #expect(ended[0].result == .object(["got": .object(["n": .int(1)])]))
    }

    @Test("shutdown cancels a running command (reason shutdown) and returns once it ended; later wakes are refused")
    func shutdown() async throws {
        let f = await DaemonFixture([DaemonFixture.command("slow", ["/bin/sleep", "30"])])
        let (runs, later) = try await f.wake("slow", follow: true)
        await f.daemon.shutdown()
        var last = runs[0]
        for try await update in later { last = update[0] }
        // The grace is long (60 s): however loaded the machine, sleep ends by the SIGTERM, not the kill.
        #expect(last.state == .cancelled && last.cancelReason == "shutdown" && last.signal == "SIGTERM", "\(last)")
        await #expect(throws: ReplyError(name: SchedulerInterface.shuttingDown, parameters: [:])) {
            _ = try await f.wake("slow")
        }
    }

    @Test("a run past its budget is cancelled, then killed at the budget's end")
    func budget() async throws {
        let stubborn = ["/bin/sh", "-c", "trap '' TERM; sleep 30"]
        let f = await DaemonFixture([
            DaemonFixture.command("stubborn", stubborn, budget: .milliseconds(500), grace: .milliseconds(200))
        ])
        let ended = try await f.wakeAndWait("stubborn")
        #expect(ended.map(\.state) == [.killed] && ended[0].signal == "SIGKILL")
        let ids = f.recorder.run(ended[0].runId).compactMap { $0["MESSAGE_ID"] }
        #expect(ids.contains(MessageID.cancelSignalled.rawValue))
    }

    @Test("List, Status and Cancel answer at once through the service; an unknown method and interface are named")
    func otherMethods() async throws {
        let f = await DaemonFixture([DaemonFixture.command("slow", ["/bin/sleep", "30"])])
        /// The call's one reply, as a client reads it off the wire.
        func only(_ call: VarlinkCall) async -> VarlinkReply? {
            var replies: [VarlinkReply] = []
            for await reply in await f.call(call) { replies.append(reply) }
            return replies.count == 1 ? try? VarlinkReply(message: replies[0].encoded) : nil
        }
        let list = await only(VarlinkCall(method: SchedulerInterface.List.name))
        #expect(list?.parameters["tasks"]?.arrayValue?.count == 1)
        let (runs, _) = try await f.wake("slow")
        let status = await only(VarlinkCall(method: SchedulerInterface.Status.name, parameters: ["name": "slow"]))
        #expect(status?.parameters["task"]?["current"]?["runId"]?.stringValue == runs[0].runId)
        let cancel = await only(VarlinkCall(method: SchedulerInterface.Cancel.name, parameters: ["target": "slow"]))
        #expect(try cancel.map(DaemonFixture.runs)?.map(\.runId) == [runs[0].runId])
        let noMethod = await only(VarlinkCall(method: SchedulerInterface.name + ".Nope"))
        #expect(noMethod?.error == VarlinkServiceInterface.methodNotFound)
        let noInterface = await only(VarlinkCall(method: "com.example.Nope"))
        #expect(noInterface?.error == VarlinkServiceInterface.interfaceNotFound)
        let badParameter = await only(VarlinkCall(method: SchedulerInterface.Status.name, parameters: ["nom": "slow"]))
        #expect(badParameter?.error == VarlinkServiceInterface.invalidParameter)
        await f.daemon.shutdown()
    }

    @Test("a Swift handler's scheduleNext(after:) starts the task's next run by itself, journaled and kept on disk")
    func scheduleNext() async throws {
        let key = TaskKey(kind: "appRefresh", identifier: "chain")
        let handler = TaskHandler { run, _, controls in
            if run.trigger == .wake { controls.scheduleNext(.milliseconds(200)) }
            return nil
        }
        let f = await DaemonFixture([TaskDefinition(key: key, handler: .swift)], handlers: ["chain": handler])
        let first = try await f.wakeAndWait("chain")
        #expect(first.map(\.state) == [.completed])
        let requested = try #require(
            f.recorder.entries.first { $0["MESSAGE_ID"] == MessageID.runRequested.rawValue })
        #expect(requested["TASK"] == "chain" && requested["TASK_REQUESTED_USEC"] != nil)
        // The next run starts by itself: wait for its start entry (the test's limit bounds the wait).
        var timerStart: LogEntry?
        while timerStart == nil {
            timerStart = f.recorder.entries.first {
                $0["MESSAGE_ID"] == MessageID.runStarted.rawValue && $0["TASK_TRIGGER"] == "timer"
            }
            if timerStart == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(timerStart?["TASK"] == "chain")
        await f.daemon.shutdown()
    }
}
