import TaskScheduling
import TaskdProtocol
import Testing

@testable import TaskdDaemon

/// `Pause` and `Resume` on the manual daemon: a paused task records its triggers without running
/// them, until it is resumed or its pause ends on the clock.
@Suite("Daemon on manual ports: pause and resume", .timeLimit(.minutes(1)))
struct DaemonPauseTests {
    typealias F = ManualDaemonFixture

    @Test("pause names the tasks it paused; resume names them again, and a wake then runs")
    func pauseAndResume() async throws {
        let f = await F([F.task("fetch"), F.task("other")])
        let paused = try await f.onLoop { try $0.pause(target: "fetch", until: nil, note: "", peer: F.root) }
        #expect(paused == ["processing:fetch"])
        #expect(try await f.status("fetch").paused)
        #expect(try await f.wake("fetch").map(\.disposition) == [.paused])
        let resumed = try await f.onLoop { try $0.resume(target: "fetch", peer: F.root) }
        #expect(resumed == ["processing:fetch"])
        #expect(try await f.status("fetch").paused == false)
        #expect(try await f.wake("fetch").map(\.disposition) == [.started])
        #expect(f.started("fetch").count == 1)
        #expect(f.entries(.taskPaused).count == 1 && f.entries(.taskResumed).count == 1)
    }

    @Test("resume of a task that is not paused names nothing")
    func resumeUnpaused() async throws {
        let f = await F([F.task("fetch")])
        #expect(try await f.onLoop { try $0.resume(target: "fetch", peer: F.root) }.isEmpty)
        #expect(f.entries(.taskResumed).isEmpty)
    }

    @Test("a pause until a time ends when the clock reaches it, not before")
    func pauseUntil() async throws {
        let f = await F([F.task("fetch")])
        let until = f.clock.now().realtime + TimeSpan.seconds(60).microseconds
        _ = try await f.onLoop { try $0.pause(target: "fetch", until: until, note: "", peer: F.root) }
        #expect(try await f.status("fetch").pausedUntilUSec == until)
        await f.advance(by: .milliseconds(59_999))
        #expect(try await f.status("fetch").paused)
        await f.advance(by: .milliseconds(1))
        #expect(try await f.status("fetch").paused == false)
        #expect(f.entries(.taskResumed).count == 1)
        #expect(try await f.wake("fetch").map(\.state) == [.running])
    }

    @Test("a pause lets the run in progress go on; a timer due while paused is recorded, not run")
    func pauseKeepsTheRunAndSkipsTimers() async throws {
        let f = await F([F.task("tick") { $0.onStartup = [.seconds(10)] }, F.task("fetch")])
        let running = try await f.wake("fetch")[0].runId
        _ = try await f.onLoop { try $0.pause(target: "processing", until: nil, note: "", peer: F.root) }
        #expect(f.launcher.signals.isEmpty)
        #expect(try await f.status("fetch").current?.runId == running)
        await f.advance(by: .seconds(10))
        #expect(f.started("tick").isEmpty)
        let skipped = try await f.status("tick").last
        #expect(skipped?.trigger == .startup && skipped?.cancelReason == "paused")
    }
}
