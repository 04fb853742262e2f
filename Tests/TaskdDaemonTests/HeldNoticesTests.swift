import Testing

@testable import TaskScheduling
@testable import TaskdDaemon

@Suite("Held notices: a signal's notice waits for its run's end, or its delay, and keeps its order")
struct HeldNoticesTests {
    static func run(_ id: String) -> Run {
        Run(
            id: id, key: TaskKey(kind: "processing", identifier: id), trigger: .wake, attempt: 1,
            queued: ClockReading(monotonic: 0, realtime: 0), budget: TimeSpan(microseconds: 60_000),
            cancelGrace: TimeSpan(microseconds: 40_000), inProcess: false)
    }

    @Test("a run's end releases its notices in order, and only its own")
    func releaseAtEnd() {
        var notices = HeldNotices()
        notices.hold(.cancelling(Self.run("a")), at: 1_000)
        notices.hold(.cancelling(Self.run("b")), at: 1_100)
        notices.hold(.killing(Self.run("a")), at: 1_200)
        #expect(notices.release(run: "c").isEmpty)
        #expect(notices.release(run: "a") == [.cancelling(Self.run("a")), .killing(Self.run("a"))])
        #expect(notices.release(run: "a").isEmpty)
        #expect(notices.nextDue == 1_100 + HeldNotices.delay)
        #expect(!notices.isEmpty)
    }

    @Test("a notice goes out `delay` after it was held, not before, and the next due time follows")
    func releaseWhenDue() {
        var notices = HeldNotices()
        #expect(notices.nextDue == nil)
        notices.hold(.killing(Self.run("a")), at: 1_000)
        notices.hold(.killing(Self.run("b")), at: 1_500)
        #expect(notices.nextDue == 1_000 + HeldNotices.delay)
        #expect(notices.releaseDue(at: 1_000 + HeldNotices.delay - 1).isEmpty)
        #expect(notices.releaseDue(at: 1_000 + HeldNotices.delay) == [.killing(Self.run("a"))])
        #expect(notices.nextDue == 1_500 + HeldNotices.delay)
        #expect(notices.releaseDue(at: 10_000) == [.killing(Self.run("b"))])
        #expect(notices.isEmpty && notices.nextDue == nil)
    }
}
