import TaskScheduling
import TaskdProtocol
import TaskdTestSupport
import Testing

@testable import TaskdDaemon

/// What the manual clock's moving does to the daemon: budgets cancel and stop runs, timers fire,
/// a run a handler asked for starts, each at its microsecond.
@Suite("Daemon on manual ports: budgets and timers", .timeLimit(.minutes(1)))
struct DaemonClockTests {
    typealias F = ManualDaemonFixture

    @Test("a run is signalled to cancel at budget − grace, and stopped hard at the budget's end")
    func budget() async throws {
        let f = await F([F.task("slow", budget: .seconds(10), grace: .seconds(2))])
        let id = try await f.wake("slow")[0].runId
        await f.advance(by: .milliseconds(7_999))
        #expect(f.launcher.signals.isEmpty)
        await f.advance(by: .milliseconds(1))
        #expect(f.launcher.signals == [.init(runID: id, hard: false)])
        let cancelling = try await f.status("slow").current
        #expect(cancelling?.state == .cancelling && cancelling?.cancelReason == "budget")
        #expect(f.entries(.cancelSignalled).count == 1)
        await f.advance(by: .milliseconds(1_999))
        #expect(f.launcher.signals.count == 1)
        await f.advance(by: .milliseconds(1))
        #expect(f.launcher.signals == [.init(runID: id, hard: false), .init(runID: id, hard: true)])
        await f.end(id, .signaled(9))
        let last = try await f.status("slow").last
        #expect(last?.state == .killed && last?.cancelReason == "budget" && last?.signal == "SIGKILL")
        #expect(last?.durationUSec == TimeSpan.seconds(10).microseconds)
    }

    @Test("a run that exits 0 after its cancel is done partially, and the hard stop is not sent")
    func endsWithinTheGrace() async throws {
        let f = await F([F.task("slow", budget: .seconds(10), grace: .seconds(2))])
        let id = try await f.wake("slow")[0].runId
        await f.advance(by: .seconds(9))
        await f.end(id, .exited(0))
        await f.advance(by: .seconds(5))
        #expect(f.launcher.signals == [.init(runID: id, hard: false)])
        let last = try await f.status("slow").last
        #expect(last?.state == .expired && last?.partial == true && last?.cancelReason == "budget")
    }

    @Test("OnStartupSec= fires at its time after the start; OnUnitActiveSec= then counts from the run's start")
    func timers() async throws {
        let f = await F([
            F.task("tick") {
                $0.onStartup = [.seconds(10)]; $0.onUnitActive = [.seconds(60)]
            }
        ])
        await f.advance(by: .milliseconds(9_999))
        #expect(f.launcher.started.isEmpty)
        await f.advance(by: .milliseconds(1))
        let first = try #require(f.started("tick").first)
        #expect(first.trigger == .startup)
        #expect(first.started?.monotonic == ManualClock.origin.monotonic + TimeSpan.seconds(10).microseconds)
        let next = try await f.status("tick").nextElapseUSec
        #expect(next == ManualClock.origin.realtime + TimeSpan.seconds(70).microseconds)
        await f.advance(by: .seconds(5))
        await f.end(first.id)
        await f.advance(by: .milliseconds(54_999))
        #expect(f.started("tick").count == 1)
        await f.advance(by: .milliseconds(1))
        #expect(f.started("tick").map(\.trigger) == [.startup, .timer])
    }

    @Test("a timer that fires while the task runs joins the run in progress (Overlap=coalesce)")
    func timerCoalesces() async throws {
        let f = await F([
            F.task("tick") {
                $0.onStartup = [.seconds(1)]; $0.onUnitActive = [.seconds(2)]; $0.overlap = .coalesce
            }
        ])
        await f.advance(by: .seconds(1))
        let running = try #require(f.started("tick").first)
        await f.advance(by: .seconds(2))
        #expect(f.started("tick").count == 1)
        #expect(f.entries(.coalesced).count == 1)
        #expect(try await f.status("tick").current?.runId == running.id)
    }

    @Test("a run a handler asks for starts after the delay, is journaled, and is kept in the store until then")
    func requestRun() async throws {
        let f = await F([F.task("chain")])
        let key = F.task("chain").key
        let due = f.clock.now().realtime + TimeSpan.seconds(30).microseconds
        try await f.onLoop { $0.requestRun(key, after: .seconds(30)) }
        let store = try #require(f.store as? MemoryStore)
        #expect(store.record(key)?.requestedUSec == due)
        #expect(f.entries(.runRequested).first?["TASK_REQUESTED_USEC"] == String(due))
        await f.advance(by: .milliseconds(29_999))
        #expect(f.launcher.started.isEmpty)
        await f.advance(by: .milliseconds(1))
        #expect(f.started("chain").map(\.trigger) == [.timer])
        #expect(store.record(key)?.requestedUSec == nil)
    }
}
