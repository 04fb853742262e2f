import TaskScheduling
import TaskdProtocol
import Testing

@testable import TaskdDaemon

/// `Why`, `Metrics`, `List`, `Status` and `History` on the manual daemon: what they tell of tasks
/// the test ran.
@Suite("Daemon on manual ports: what the tasks are", .timeLimit(.minutes(1)))
struct DaemonQueryTests {
    typealias F = ManualDaemonFixture

    /// Wakes `task` and ends its run with `exit`; the run's id.
    private func run(_ f: F, _ task: String, exit: Int32 = 0) async throws -> String {
        let id = try await f.wake(task)[0].runId
        await f.end(id, .exited(exit))
        return id
    }

    @Test("why tells a running task's run, a paused task's pause and a wake-only task, each with its message id")
    func why() async throws {
        let f = await F([F.task("busy"), F.task("held"), F.task("idle")])
        let busy = try await f.wake("busy")[0].runId
        _ = try await f.onLoop { try $0.pause(target: "held", until: nil, note: "disk swap", peer: F.root) }
        let (key, reasons) = try await f.onLoop { try $0.why(name: "busy") }
        #expect(key == F.task("busy").key)
        let running = try #require(reasons.first { $0.0.code == .running })
        #expect(running.0.runID == busy && running.1 == .runStarted)
        let paused = try await f.onLoop { try $0.why(name: "held") }.1
        #expect(paused.contains { $0.0.code == .paused && $0.0.text.contains("disk swap") && $0.1 == .taskPaused })
        let idle = try await f.onLoop { try $0.why(name: "idle") }.1
        #expect(idle.map(\.0.code).contains(.wakeOnly))
        await #expect(throws: TargetError.self) { _ = try await f.onLoop { try $0.why(name: "nope") } }
    }

    @Test("metrics count the tasks, the active runs, the wakes and the runs by outcome")
    func metrics() async throws {
        let f = await F([F.task("a"), F.task("b")])
        _ = try await run(f, "a")
        _ = try await run(f, "a", exit: 1)
        _ = try await f.wake("b")
        let text = String(decoding: try await f.onLoop { $0.metrics() }, as: UTF8.self)
        let samples = Dictionary(
            text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
                line.lastIndex(of: " ").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
            }, uniquingKeysWith: { $1 })
        #expect(samples["taskd_tasks"] == "2")
        #expect(samples["taskd_runs_active"] == "1")
        #expect(samples["taskd_wakes_total"] == "3")
        #expect(samples[#"taskd_runs_total{task="a",kind="processing",outcome="completed"}"#] == "1")
        #expect(samples[#"taskd_runs_total{task="a",kind="processing",outcome="failed"}"#] == "1")
        #expect(samples[#"taskd_task_consecutive_failures{task="a",kind="processing"}"#] == "1")
        #expect(text.hasSuffix("# EOF\n"))
    }

    @Test("list tells every task, sorted, with its run in progress and whether it is paused")
    func list() async throws {
        let f = await F([F.task("c"), F.task("a"), F.task("b")])
        let running = try await f.wake("b")[0].runId
        _ = try await f.onLoop { try $0.pause(target: "c", until: nil, note: "", peer: F.root) }
        let tasks = try await f.onLoop { $0.list() }
        #expect(tasks.map(\.name) == ["a", "b", "c"])
        #expect(tasks.map(\.current?.runId) == [nil, running, nil])
        #expect(tasks.map(\.paused) == [false, false, true])
    }

    @Test("status tells the run in progress, the queue behind it and the last result; an unknown name throws")
    func status() async throws {
        let f = await F([F.task("fetch") { $0.overlap = .queue }])
        let first = try await run(f, "fetch", exit: 2)
        let running = try await f.wake("fetch", payload: "1")[0].runId
        let queued = try await f.wake("fetch", payload: "2")[0].runId
        let info = try await f.status("fetch")
        #expect(info.current?.runId == running && info.current?.state == .running)
        #expect(info.queue.map(\.runId) == [queued])
        #expect(info.last?.runId == first && info.last?.exitStatus == 2)
        #expect(info.consecutiveFailures == 1)
        await #expect(throws: TargetError.self) { _ = try await f.status("nope") }
    }

    @Test("history gives the last runs, the last to end first, at most the limit, and keeps History= of them")
    func history() async throws {
        let f = await F([F.task("fetch") { $0.historySize = 3 }])
        var ids: [String] = []
        for exit in Int32(0)..<4 { ids.append(try await run(f, "fetch", exit: exit)) }
        let two = try await f.onLoop { try $0.history(name: "fetch", limit: 2) }
        #expect(two.map(\.runId) == [ids[3], ids[2]])
        #expect(two.map(\.exitStatus) == [3, 2])
        let all = try await f.onLoop { try $0.history(name: "fetch", limit: 10) }
        #expect(all.map(\.runId) == [ids[3], ids[2], ids[1]])
        await #expect(throws: TargetError.self) { _ = try await f.onLoop { try $0.history(name: "nope", limit: 1) } }
    }
}
