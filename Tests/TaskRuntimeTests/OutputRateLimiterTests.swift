import TaskScheduling
import Testing

@testable import TaskRuntime

@Suite("Output rate limit: fixed windows on a manual clock")
struct OutputRateLimiterTests {
    let limit = OutputRateLimit(interval: .seconds(10), burst: 3)

    @Test("the burst passes, the rest of the window is dropped and counted")
    func burst() {
        var m = OutputRateLimiter(limit)
        let verdicts = (0..<5).map { m.admit(atUSec: 1_000 + UInt64($0)) }
        #expect(verdicts == [.pass, .pass, .pass, .drop, .drop])
        #expect(m.dropped == 2)
    }

    @Test("the first line of the next window passes and carries the count; the count resets")
    func nextWindow() {
        var m = OutputRateLimiter(limit)
        for t in 0..<5 { _ = m.admit(atUSec: UInt64(t)) }
        #expect(m.admit(atUSec: 9_999_999) == .drop)  // 1 µs before the window ends
        #expect(m.admit(atUSec: 10_000_000) == .passAfterDropping(3))
        #expect(m.admit(atUSec: 10_000_001) == .pass)
        #expect(m.dropped == 0)
    }

    @Test("the window starts at the first line after a quiet spell, not on a fixed grid")
    func windowFollowsOutput() {
        var m = OutputRateLimiter(limit)
        _ = m.admit(atUSec: 0)
        for t in [50_000_000, 50_000_001, 50_000_002] { #expect(m.admit(atUSec: UInt64(t)) == .pass) }
        #expect(m.admit(atUSec: 59_999_999) == .drop)
    }

    @Test("finish hands back what was dropped and not yet reported, once")
    func finish() {
        var m = OutputRateLimiter(limit)
        for t in 0..<7 { _ = m.admit(atUSec: UInt64(t)) }
        #expect(m.finish() == 4)
        #expect(m.finish() == 0)
    }

    @Test(
        "a zero burst or interval turns the limit off",
        arguments: [
            OutputRateLimit.off, OutputRateLimit(interval: .zero, burst: 5),
            OutputRateLimit(interval: .seconds(1), burst: 0),
        ])
    func off(limit: OutputRateLimit) {
        var m = OutputRateLimiter(limit)
        #expect((0..<10_000).allSatisfy { m.admit(atUSec: UInt64($0)) == .pass })
        #expect(m.finish() == 0)
    }
}
