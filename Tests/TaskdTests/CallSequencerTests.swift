import Testing

@testable import TaskdSystem

@Suite("Call order on a connection: served at once, or by a task")
struct CallSequencerTests {
    @Test("lone calls are served at once one after another while each is answered before the next")
    func loneCalls() {
        var s = CallSequencer()
        for _ in 0..<3 {
            let offered = s.offer()
            let answer = s.answered()
            #expect(offered && answer == (atOnce: true, handOver: false) && s.serving == .idle)
        }
    }

    @Test("calls that come while one served at once is unanswered wait; its reply hands them over")
    func callsWaitBehindTheCallServedAtOnce() {
        var s = CallSequencer()
        let first = s.offer()
        let second = s.offer()
        let queued = [s.queued(), s.queued()]
        let answer = s.answered()
        #expect(first)
        #expect(!second, "a second lone call must not overtake the first")
        #expect(queued == [false, false], "not handed over while the first is unanswered")
        #expect(answer == (atOnce: true, handOver: true))
        #expect(s.serving == .handedOver)
    }

    @Test("a declined call and calls that come together go to a serving task at once, for good")
    func handedOverForGood() {
        var s = CallSequencer()
        let offered = s.offer()
        s.declined()
        let idle = s.serving
        let handOver = s.queued()
        let offeredAgain = s.offer()
        let handOverAgain = s.queued()
        let answer = s.answered()
        #expect(offered && idle == .idle && handOver)
        #expect(!offeredAgain, "once a task serves the connection, nothing is served at once")
        #expect(!handOverAgain, "handed over once")
        #expect(answer == (atOnce: false, handOver: false) && s.serving == .handedOver)
    }

}
