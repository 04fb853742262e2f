import Foundation
import TaskScheduling
import TaskdProtocol
import TaskdSystem
import Testing

@testable import Taskd
@testable import TaskdConfig

/// A `Daemon` on a temporary state folder with the given tasks, its journal recorded through the
/// real journal queue: the orchestrator driven by direct calls, without a socket.
final class DaemonFixture {
    let directory = NSTemporaryDirectory() + "taskd-daemon-\(UUID().uuidString)"
    let recorder = EntryRecorder()
    let daemon: Daemon
    static let root = PeerCredentials(pid: 1, uid: 0, gid: 0)

    init(_ tasks: [TaskDefinition], handlers: [String: TaskHandler] = [:]) async {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let journal = EventJournal(backend: QueuedLogBackend(base: recorder))
        let store = StateStore(directory: directory) { _, _ in }
        let config = LoadedConfig(daemon: DaemonSettings(), tasks: tasks, diagnostics: [])
        daemon = Daemon(
            config: config, handlers: handlers, journal: journal, notifier: ServiceNotifier(),
            stateDirectory: directory, store: store, records: [:], loadConfig: { config })
        await daemon.start(recovering: [])
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    static func command(_ name: String, _ argv: [String], budget: TimeSpan? = nil, grace: TimeSpan = .seconds(60))
        -> TaskDefinition
    {
        TaskDefinition(
            key: TaskKey(kind: "processing", identifier: name), budget: budget, cancelGrace: grace,
            handler: .command(CommandSpec(argv: argv)), source: "test")
    }

    /// Wakes `target` and follows its runs to their ends; the last state of each run.
    func wakeAndWait(_ target: String, payload: String? = nil) async throws -> [RunInfo] {
        let (runs, updates) = try await daemon.wake(
            target: target, id: nil, payload: payload, watch: true, peer: Self.root)
        var last = Dictionary(uniqueKeysWithValues: runs.map { ($0.runId, $0) })
        for await update in updates! { last[update.runId] = update }
        return runs.map { last[$0.runId]! }
    }
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
        #expect(entries.map { $0["TASK_STREAM"] ?? $0["MESSAGE_ID"] ?? "?" } == [
            MessageID.runStarted.rawValue, "stdout", MessageID.runCompleted.rawValue,
        ])
        #expect(entries[1].message == "hi")
    }

    @Test("a wake naming no task is refused with the known tasks; nothing is started")
    func unknownTarget() async throws {
        let f = await DaemonFixture([DaemonFixture.command("hello", ["/bin/true"])])
        await #expect(throws: TargetError.noSuchTask(target: "nope", known: ["processing:hello"])) {
            _ = try await f.daemon.wake(target: "nope", id: nil, payload: nil, watch: false, peer: DaemonFixture.root)
        }
        #expect(await f.daemon.list().allSatisfy { $0.current == nil })
    }

    @Test("a Swift handler gets the payload and its result is kept with the run")
    func swiftHandler() async throws {
        let key = TaskKey(kind: "appRefresh", identifier: "echo")
        var definition = TaskDefinition(key: key, handler: .swift, source: "swift")
        definition.overlap = .coalesce
        let handler = TaskHandler { run, _ in "{\"got\":\(run.payload ?? "null")}" }
        let f = await DaemonFixture([definition], handlers: ["echo": handler])
        let ended = try await f.wakeAndWait("echo", payload: "{\"n\":1}")
        #expect(ended.map(\.state) == [.completed])
        #expect(ended[0].result == .object(["got": .object(["n": .int(1)])]))
    }

    @Test("shutdown cancels a running command (reason shutdown) and returns once it ended; later wakes are refused")
    func shutdown() async throws {
        let f = await DaemonFixture([DaemonFixture.command("slow", ["/bin/sleep", "30"])])
        let (runs, updates) = try await f.daemon.wake(
            target: "slow", id: nil, payload: nil, watch: true, peer: DaemonFixture.root)
        await f.daemon.shutdown()
        var last = runs[0]
        for await update in updates! { last = update }
        // The grace is long (60 s): however loaded the machine, sleep ends by the SIGTERM, not the kill.
        #expect(last.state == .cancelled && last.cancelReason == "shutdown" && last.signal == "SIGTERM", "\(last)")
        await #expect(throws: DaemonError.self) {
            _ = try await f.daemon.wake(target: "slow", id: nil, payload: nil, watch: false, peer: DaemonFixture.root)
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
}
