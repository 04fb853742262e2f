import TaskScheduling
import TaskdMachine
import TaskdProtocol
import TaskdTestSupport
import Testing

@testable import TaskdDaemon

/// What the machine tells the daemon: conditions that come to hold or stop holding, and system
/// sleep, from a `ManualMachine` the test sets.
@Suite("Daemon on manual ports: conditions and system sleep", .timeLimit(.minutes(1)))
struct DaemonMachineTests {
    typealias F = ManualDaemonFixture

    @Test("a run that needs AC power waits while it does not hold, and starts when the machine says it does")
    func conditionWaits() async throws {
        let f = await F([F.task("sync") { $0.conditions = [.acPower] }], unheld: [.acPower])
        let runs = try await f.wake("sync")
        #expect(runs.map(\.state) == [.queued] && runs[0].waitingFor == "on AC power")
        await f.send(.conditions)
        #expect(f.launcher.started.isEmpty)
        let why = try await f.onLoop { try $0.why(name: "sync") }.1
        #expect(why.contains { $0.0.code == .waitingForConditions && $0.1 == .conditionsChanged })
        f.machine.set(unheld: [])
        await f.send(.conditions)
        #expect(f.started("sync").map(\.id) == [runs[0].runId])
        #expect(f.entries(.conditionsChanged).count == 2)
    }

    @Test("a run that waits MaxDeferSec= for its conditions gives up then: cancelled, reason condition-timeout")
    func maxDeferGivesUp() async throws {
        let f = await F(
            [
                F.task("sync") {
                    $0.conditions = [.acPower]; $0.maxDefer = .seconds(30)
                }
            ], unheld: [.acPower])
        let id = try await f.wake("sync")[0].runId
        await f.advance(by: .milliseconds(29_999))
        #expect(try await f.status("sync").current?.runId == id)
        await f.advance(by: .milliseconds(1))
        let info = try await f.status("sync")
        #expect(info.current == nil)
        #expect(info.last?.runId == id && info.last?.state == .cancelled)
        #expect(info.last?.cancelReason == "condition-timeout")
        f.machine.set(unheld: [])
        await f.send(.conditions)
        #expect(f.launcher.started.isEmpty)
    }

    @Test("a run in progress whose condition stops holding is cancelled with ConditionLost=cancel, left with continue")
    func conditionLost() async throws {
        let f = await F([
            F.task("strict") {
                $0.conditions = [.acPower]; $0.conditionLost = .cancel
            },
            F.task("lenient") {
                $0.conditions = [.acPower]; $0.conditionLost = .continue
            },
        ])
        let strict = try await f.wake("strict")[0].runId
        _ = try await f.wake("lenient")
        f.machine.set(unheld: [.acPower])
        await f.send(.conditions)
        #expect(f.launcher.signals == [.init(runID: strict, hard: false)])
        #expect(try await f.status("strict").current?.cancelReason == "condition-lost")
    }

    @Test("sleep cancels running runs (reason sleep); nothing starts until the resume, which runs the cut run again")
    func sleepAndResume() async throws {
        let f = await F([F.task("sync"), F.task("later")])
        let cut = try await f.wake("sync")[0].runId
        await f.send(.prepareForSleep)
        #expect(f.launcher.signals == [.init(runID: cut, hard: false)])
        #expect(try await f.status("sync").current?.cancelReason == "sleep")
        #expect(f.entries(.systemSleeps).first?["TASKD_SLEEP_CANCELLED_RUNS"] == "1")
        await f.end(cut, .signaled(15))
        #expect(try await f.status("sync").last?.cancelReason == "sleep")
        let waiting = try await f.wake("later")
        #expect(waiting.map(\.state) == [.queued])
        #expect(try await f.onLoop { try $0.why(name: "later") }.1.contains { $0.0.code == .sleeping })
        #expect(f.launcher.started.count == 1)
        await f.send(.resumed)
        #expect(f.entries(.systemResumed).count == 1)
        let again = f.started("sync")
        #expect(again.map(\.trigger) == [.wake, .resume] && again[1].previousAttemptID == cut)
        #expect(f.started("later").map(\.id) == [waiting[0].runId])
    }

    @Test("a run cut by sleep is stopped hard within nine tenths of logind's InhibitDelayMaxSec")
    func sleepHardStop() async throws {
        let f = await F([F.task("sync", grace: .seconds(60))])
        let id = try await f.wake("sync")[0].runId
        await f.send(.prepareForSleep)
        // ManualMachine's InhibitDelayMaxSec is 5 s: the hard stop comes 4.5 s later, not at the grace's end.
        await f.advance(by: .milliseconds(4_499))
        #expect(f.launcher.signals == [.init(runID: id, hard: false)])
        await f.advance(by: .milliseconds(1))
        #expect(f.launcher.signals == [.init(runID: id, hard: false), .init(runID: id, hard: true)])
    }

    @Test("a Sleep=block run goes on through prepare-for-sleep; WatchSleep=no ignores sleep altogether")
    func sleepExemptions() async throws {
        let f = await F([F.task("keep") { $0.sleep = .block }])
        _ = try await f.wake("keep")
        await f.send(.prepareForSleep)
        #expect(f.launcher.signals.isEmpty)
        #expect(try await f.status("keep").current?.state == .running)

        let unwatched = await F([F.task("sync"), F.task("other")], settings: F.settings(watchSleep: false))
        _ = try await unwatched.wake("sync")
        await unwatched.send(.prepareForSleep)
        #expect(unwatched.launcher.signals.isEmpty && unwatched.entries(.systemSleeps).isEmpty)
        #expect(try await unwatched.wake("other").map(\.state) == [.running])
    }
}
