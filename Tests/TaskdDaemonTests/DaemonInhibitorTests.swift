import TaskScheduling
import TaskdMachine
import TaskdTestSupport
import Testing

@testable import TaskdDaemon

/// logind's inhibitor locks, as the scheduler decides them and the `ManualMachine` holds them: the
/// delay lock from the first run on (so sleep waits for the runs it cancels), released once
/// sleeping with no run left to wait for, taken again at resume; the block lock while a
/// `Sleep=block` run is active.
@Suite("Daemon on manual ports: sleep inhibitors", .timeLimit(.minutes(1)))
struct DaemonInhibitorTests {
    typealias F = ManualDaemonFixture

    @Test("the delay lock is taken at the first run's start and kept after it ends")
    func delayTakenAtFirstRun() async throws {
        let f = await F([F.task("sync")])
        #expect(f.machine.held.isEmpty)
        let id = try await f.wake("sync")[0].runId
        #expect(f.machine.held == [.delay])
        await f.end(id)
        #expect(f.machine.held == [.delay])
    }

    @Test("sleeping, the delay lock is released once the cancelled runs ended, and taken again at resume")
    func delayReleasedForSleep() async throws {
        let f = await F([F.task("sync")])
        let id = try await f.wake("sync")[0].runId
        await f.send(.prepareForSleep)
        #expect(f.machine.held == [.delay])
        await f.end(id, .signaled(15))
        #expect(f.machine.held.isEmpty)
        #expect(f.entries(.systemSleeps).contains { $0.message == "every run is stopped: the system may sleep" })
        await f.send(.resumed)
        #expect(f.machine.held == [.delay])
        #expect(f.started("sync").map(\.trigger) == [.wake, .resume])
    }

    @Test("sleeping with no run active releases the delay lock at once")
    func delayReleasedWhenIdle() async throws {
        let f = await F([F.task("sync")])
        await f.end(try await f.wake("sync")[0].runId)
        #expect(f.machine.held == [.delay])
        await f.send(.prepareForSleep)
        #expect(f.machine.held.isEmpty)
    }

    @Test("WatchSleep=no takes no lock")
    func noLockWithoutWatchSleep() async throws {
        let f = await F([F.task("sync")], settings: F.settings(watchSleep: false))
        _ = try await f.wake("sync")
        #expect(f.machine.held.isEmpty)
    }

    @Test("the block lock is held while a Sleep=block run is active, and released at its end")
    func blockWhileBlockingRunIsActive() async throws {
        let f = await F([F.task("backup") { $0.sleep = .block }, F.task("sync")])
        let sync = try await f.wake("sync")[0].runId
        #expect(!f.machine.held.contains(.block))
        let backup = try await f.wake("backup")[0].runId
        #expect(f.machine.held.contains(.block))
        await f.end(sync)
        #expect(f.machine.held.contains(.block))
        await f.end(backup)
        #expect(!f.machine.held.contains(.block))
    }
}
