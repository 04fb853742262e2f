import Synchronization
import TaskScheduling
import TaskdConfig
import TaskdProtocol
import TaskdTestSupport
import Testing

@testable import TaskdDaemon

/// `Reload` and the daemon's stop on manual ports: a configuration the test hands over, runs the
/// test ends.
@Suite("Daemon on manual ports: reload and shutdown", .timeLimit(.minutes(1)))
struct DaemonLifecycleTests {
    typealias F = ManualDaemonFixture

    @Test("a valid reload adds, removes and changes tasks: removed runs are cancelled, changed ones restarted")
    func reload() async throws {
        let f = await F([F.task("keep"), F.task("change"), F.task("drop")])
        let changing = try await f.wake("change")[0].runId
        let dropping = try await f.wake("drop")[0].runId
        f.nextConfig.value = LoadedConfig(
            daemon: F.settings(), tasks: [F.task("add"), F.task("change", budget: .seconds(30)), F.task("keep")])
        let diff = try await f.daemon.reload().get()
        #expect(diff.added == [F.task("add").key] && diff.removed == [F.task("drop").key])
        #expect(diff.changed == [F.task("change").key] && diff.unchanged == [F.task("keep").key])
        #expect(try await f.onLoop { $0.list() }.map(\.name) == ["add", "change", "keep"])
        #expect(Set(f.launcher.signals) == [.init(runID: changing, hard: false), .init(runID: dropping, hard: false)])
        // The changed task's work starts again at once, under its new budget.
        let restarted = f.started("change")
        #expect(restarted.count == 2 && restarted[1].budget == .seconds(30) && restarted[1].trigger == .wake)
        await f.end(changing, .signaled(15))
        #expect(try await f.lastRun("change")?.cancelReason == "reconfigured")
        #expect(try await f.status("change").current?.runId == restarted[1].id)
        #expect(f.entries(.reloaded).count == 1)
        #expect(try await f.wake("add").map(\.state) == [.running])
        await #expect(throws: TargetError.self) { _ = try await f.wake("drop") }
    }

    @Test("an invalid reload changes nothing and returns its errors as file:line lines, journaled")
    func invalidReload() async throws {
        let f = await F([F.task("keep")])
        let running = try await f.wake("keep")[0].runId
        let location = SourceLocation(file: "/etc/taskd/tasks/new.task", line: 3)
        f.nextConfig.value = LoadedConfig(
            daemon: F.settings(), tasks: [F.task("new")],
            diagnostics: [
                ConfigDiagnostic(location, key: "BudgetSec", "not a time span"),
                ConfigDiagnostic(location, key: "Nice", "unknown key", severity: .warning),
            ])
        let failure = try #require(await f.daemon.reload().failure)
        #expect(failure.errors == ["/etc/taskd/tasks/new.task:3: error: BudgetSec=: not a time span"])
        #expect(try await f.onLoop { $0.list() }.map(\.name) == ["keep"])
        #expect(f.launcher.signals.isEmpty)
        #expect(try await f.status("keep").current?.runId == running)
        let errors = f.entries(.configError)
        #expect(errors.map { $0["CONFIG_LINE"] } == ["3", "3"] && errors.map { $0["PRIORITY"] } == ["3", "4"])
        #expect(f.entries(.reloaded).first?.message.hasPrefix("reload refused") == true)
    }

    @Test("start replays the acknowledged wakes not answered; one naming a task that is gone is settled")
    func recovery() async throws {
        let store = MemoryStore()
        let acknowledged = ManualClock.origin.realtime - 5_000_000
        let kept = WakeRecord(
            id: "w1", key: F.task("fetch").key, wakeID: "job-1", payload: "7", acknowledgedUSec: acknowledged)
        let gone = WakeRecord(
            id: "w2", key: F.task("gone").key, wakeID: nil, payload: nil, acknowledgedUSec: acknowledged)
        _ = store.add([kept, gone])
        let f = await F([F.task("fetch")], store: store, recovering: [kept, gone])
        let replayed = f.started("fetch")
        #expect(replayed.map(\.wakeID) == ["job-1"] && replayed[0].payload == "7")
        #expect(store.unsettledWakes.map(\.id) == ["w1"])
        #expect(f.entries(.wakesRecovered).first?["TASKD_RECOVERED_WAKES"] == "1")
        await f.end(replayed[0].id)
        #expect(store.unsettledWakes.isEmpty)
    }

    @Test("shutdown cancels every running run (reason shutdown) and returns only once they all ended")
    func shutdown() async throws {
        let f = await F([F.task("a"), F.task("b"), F.task("idle")])
        let a = try await f.wake("a")[0].runId
        let b = try await f.wake("b")[0].runId
        let stopped = Mutex(false)
        let stopping = Task {
            await f.daemon.shutdown()
            stopped.withLock { $0 = true }
        }
        #expect(await f.launcher.firstSignal(to: a) == .init(runID: a, hard: false))
        #expect(await f.launcher.firstSignal(to: b) == .init(runID: b, hard: false))
        #expect(f.entries(.daemonStopping).first?.message == "stopping: cancelling 2 run(s)")
        await f.end(a, .signaled(15))
        #expect(stopped.withLock { $0 } == false)
        await f.end(b, .exited(0))
        await stopping.value
        let last = try await f.status("a").last
        #expect(last?.state == .cancelled && last?.cancelReason == "shutdown")
        // The wake of the run cut by the stop runs again after the restart; the one that finished is answered.
        let store = try #require(f.store as? MemoryStore)
        #expect(store.unsettledWakes.map(\.key.identifier) == ["a"])
        await #expect(throws: DaemonError.self) { _ = try await f.wake("idle") }
        #expect(f.started("idle").isEmpty)
    }

    @Test("shutdown stops a run that ignores its cancel hard at the end of its grace, then returns")
    func shutdownHardStop() async throws {
        let f = await F([F.task("stubborn", grace: .seconds(3))])
        let id = try await f.wake("stubborn")[0].runId
        let stopping = Task { await f.daemon.shutdown() }
        _ = await f.launcher.firstSignal(to: id)
        await f.advance(by: .milliseconds(2_999))
        #expect(f.launcher.signals == [.init(runID: id, hard: false)])
        await f.advance(by: .milliseconds(1))
        #expect(f.launcher.signals.last == .init(runID: id, hard: true))
        await f.end(id, .signaled(9))
        await stopping.value
        #expect(try await f.status("stubborn").last?.cancelReason == "shutdown")
    }

    @Test("shutdown with no run returns at once")
    func shutdownIdle() async throws {
        let f = await F([F.task("idle")])
        await f.daemon.shutdown()
        #expect(f.launcher.signals.isEmpty && f.entries(.daemonStopping).count == 1)
    }
}

extension Result {
    /// The failure, if it is one.
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
