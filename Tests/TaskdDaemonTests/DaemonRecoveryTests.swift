import TaskScheduling
import TaskdProtocol
import Testing

@testable import TaskdDaemon

/// The runs a crash left in progress, recorded at the next start (manual clock).
struct DaemonRecoveryTests {
    @Test("a run left in progress is recorded failed (lost), its instants placed again before now by the wall clock")
    func lostRunIsRecorded() async throws {
        let f = await ManualDaemonFixture([ManualDaemonFixture.task("backup")])
        let now = f.clock.now()
        // Queued and started at the same monotonic instant, 1,001 µs of wall clock ago but 1,000 µs
        // of monotonic time ago: a wall clock that ran fast must not place the start before the queue.
        var run = Run(
            id: "lost1", key: TaskKey(kind: "processing", identifier: "backup"), trigger: .timer, attempt: 1,
            queued: ClockReading(monotonic: now.monotonic - 1_000, realtime: now.realtime - 1_001),
            budget: .seconds(600), cancelGrace: .seconds(60), inProcess: false)
        run.started = run.queued
        run.phase = .running
        let snapshot = try #require(RunSnapshot(run))
        try await f.onLoop { $0.recordLost([snapshot]) }
        let history = try await f.onLoop { try $0.history(name: "backup", limit: 10) }
        let lost = try #require(history.first { $0.runId == "lost1" })
        #expect(lost.state == .failed && lost.failureReason == "lost")
        #expect(lost.durationUSec == 1_001 && lost.waitedUSec == 0)
        #expect(lost.error?.hasPrefix("taskd stopped while it ran") == true)
        // It answered no wake: it runs again, trigger resume.
        let again = try #require(f.launcher.started.last)
        #expect(again.trigger == .resume && again.previousAttemptID == "lost1")
    }
}
