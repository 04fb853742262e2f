import Synchronization
import TaskScheduling
import TaskdProtocol
import TaskdTestSupport
import Testing

@testable import TaskdDaemon

/// `Wake` and `Cancel` on the manual daemon: what the reply says, what the launcher is asked to
/// start and signal, and what a watching client hears, in order.
@Suite("Daemon on manual ports: wakes and cancels", .timeLimit(.minutes(1)))
struct DaemonWakeTests {
    typealias F = ManualDaemonFixture

    @Test(
        "a wake starts the command with the payload; the reply tells the run running; its wake is kept until the run ends"
    )
    func wakeStartsTheCommand() async throws {
        let f = await F([F.task("fetch"), F.task("other")])
        let runs = try await f.wake("fetch", payload: #"{"n":1}"#)
        #expect(runs.map(\.state) == [.running] && runs[0].disposition == .started && runs[0].trigger == .wake)
        let started = f.launcher.started
        #expect(started.map(\.id) == [runs[0].runId] && started[0].payload == #"{"n":1}"#)
        let store = try #require(f.store as? MemoryStore)
        #expect(store.unsettledWakes.map(\.key.identifier) == ["fetch"])
        await f.end(runs[0].runId)
        #expect(store.unsettledWakes.isEmpty)
        #expect(f.launcher.ended == [runs[0].runId])
        #expect(try await f.status("fetch").last?.state == .completed)
    }

    @Test(
        "a wake that joins a command run is told to the launcher, with the run answering both wakes (the keeper keeps it)"
    )
    func joinedWakeIsTold() async throws {
        let f = await F([F.task("fetch") { $0.overlap = .coalesce }])
        let first = try await f.wake("fetch")
        #expect(f.launcher.joined.isEmpty)
        let second = try await f.wake("fetch")
        #expect(second.map(\.runId) == first.map(\.runId) && second[0].disposition == .coalesced)
        let store = try #require(f.store as? MemoryStore)
        let joined = f.launcher.joined
        #expect(joined.map(\.id) == [first[0].runId])
        #expect(Set(joined[0].records) == Set(store.unsettledWakes.map(\.id)) && joined[0].records.count == 2)
    }

    @Test("a wake naming no task throws and starts nothing")
    func unknownTarget() async throws {
        let f = await F([F.task("fetch")])
        await #expect(throws: TargetError.self) { _ = try await f.wake("nope") }
        #expect(f.launcher.started.isEmpty)
    }

    @Test("a watched wake hears the run's later states; its end only once the record keeping it is saved")
    func watchHearsTheEndAfterTheSave() async throws {
        let store = GatedStore()
        let f = await F([F.task("fetch")], store: store)
        let heard = Mutex<[RunInfo]>([])
        let runs = try await f.wake("fetch") { info in heard.withLock { $0.append(info) } }
        let id = runs[0].runId
        await f.end(id, .exited(3))
        // The record is kept, but not yet on disk: the watcher has not heard of the end.
        #expect(store.waiting == 1)
        #expect(store.base.record(F.task("fetch").key)?.history.map(\.runId) == [id])
        #expect(heard.withLock { $0 }.allSatisfy { !$0.hasEnded })
        await ManualClock.onLoop { store.open() }
        let last = try #require(heard.withLock { $0.last })
        #expect(last.runId == id && last.state == .failed && last.exitStatus == 3)
    }

    @Test("a watched wake of a cancelled command hears its start, then cancelling, then the end, reason and all")
    func watchHearsCancelling() async throws {
        let f = await F([F.task("fetch")])
        let heard = Mutex<[RunInfo]>([])
        let runs = try await f.wake("fetch") { info in heard.withLock { $0.append(info) } }
        _ = try await f.onLoop { try $0.cancel(target: runs[0].runId, peer: F.root) }
        await f.end(runs[0].runId, .signaled(15))
        let states = heard.withLock { $0.map(\.state) }
        #expect(states == [.running, .cancelling, .cancelled], "\(states)")
        #expect(heard.withLock { $0.last?.cancelReason } == "requested")
    }

    @Test("a wake of a paused task is not run: the reply's run ended at once, disposition paused")
    func pausedTaskRefusesTheWake() async throws {
        let f = await F([F.task("fetch")])
        _ = try await f.onLoop { try $0.pause(target: "fetch", until: nil, note: "maintenance", peer: F.root) }
        let runs = try await f.wake("fetch")
        #expect(runs.map(\.disposition) == [.paused])
        #expect(runs[0].state == .cancelled && runs[0].cancelReason == "paused")
        #expect(f.launcher.started.isEmpty)
    }

    @Test("a wake with another payload than the full queue's last run is refused; one with the same joins it")
    func fullQueueRefusesAnotherPayload() async throws {
        let f = await F([
            F.task("fetch") {
                $0.overlap = .queue; $0.queueLimit = 1
            }
        ])
        let first = try await f.wake("fetch", payload: "1")
        let queued = try await f.wake("fetch", payload: "2")
        #expect(first[0].disposition == .started && queued[0].disposition == .queued)
        let refused = try await f.wake("fetch", payload: "3")
        #expect(refused.map(\.disposition) == [.refused] && refused[0].runId == queued[0].runId)
        let joined = try await f.wake("fetch", payload: "2")
        #expect(joined.map(\.disposition) == [.overflow] && joined[0].runId == queued[0].runId)
        #expect(f.launcher.started.count == 1)
        // The queued run starts once the running one ends.
        await f.end(first[0].runId)
        #expect(f.launcher.started.map(\.id) == [first[0].runId, queued[0].runId])
    }

    @Test("a wake of a task whose command cannot start ends the run failed, with the reason")
    func spawnFailure() async throws {
        let f = await F([F.task("broken")])
        f.launcher.failStarts(of: "broken")
        let runs = try await f.wake("broken")
        let ended = try await f.lastRun("broken")
        #expect(ended?.runId == runs.first?.runId && ended?.state == .failed && ended?.error == "refused by the test")
        #expect(runs.map(\.state) == [.failed], "the reply tells the run as it ended, not as the wake made it")
    }

    @Test("cancel by run id signals that run only; the reply tells it cancelling, reason requested")
    func cancelByRunID() async throws {
        let f = await F([F.task("a"), F.task("b")])
        let a = try await f.wake("a")[0].runId
        let b = try await f.wake("b")[0].runId
        let cancelled = try await f.onLoop { try $0.cancel(target: a, peer: F.root) }
        #expect(cancelled.map(\.runId) == [a] && cancelled[0].state == .cancelling)
        #expect(cancelled[0].cancelReason == "requested")
        #expect(f.launcher.signals == [.init(runID: a, hard: false)])
        await f.end(a, .signaled(15))
        #expect(try await f.lastRun("a")?.state == .cancelled)
        // A cancelled run's end is stale: not the task's last result.
        #expect(try await f.status("a").last == nil)
        #expect(try await f.status("b").current?.runId == b)
    }

    @Test("cancel by task signals its running run and ends its queued one without starting it")
    func cancelByTask() async throws {
        let f = await F([F.task("fetch") { $0.overlap = .queue }])
        let running = try await f.wake("fetch", payload: "1")[0].runId
        let queued = try await f.wake("fetch", payload: "2")[0].runId
        let cancelled = try await f.onLoop { try $0.cancel(target: "fetch", peer: F.root) }
        #expect(Set(cancelled.map(\.runId)) == [running, queued])
        #expect(cancelled.first { $0.runId == queued }?.state == .cancelled)
        #expect(f.launcher.signals == [.init(runID: running, hard: false)])
        await f.end(running, .signaled(15))
        #expect(f.launcher.started.map(\.id) == [running])
        let info = try await f.status("fetch")
        #expect(info.current == nil && info.queue.isEmpty)
    }

    @Test("a cancel whose grace passes without an end is followed by the hard stop")
    func cancelThenHardStop() async throws {
        let f = await F([F.task("fetch", grace: .seconds(5))])
        let id = try await f.wake("fetch")[0].runId
        _ = try await f.onLoop { try $0.cancel(target: id, peer: F.root) }
        await f.advance(by: .milliseconds(4_999))
        #expect(f.launcher.signals == [.init(runID: id, hard: false)])
        await f.advance(by: .milliseconds(1))
        #expect(f.launcher.signals == [.init(runID: id, hard: false), .init(runID: id, hard: true)])
        await f.end(id, .signaled(9))
        let last = try await f.lastRun("fetch")
        // Killed for a cancel the client asked for: cancelled, not killed by its budget.
        #expect(last?.state == .cancelled && last?.cancelReason == "requested" && last?.signal == "SIGKILL")
    }
}
