import Testing

@testable import TaskdControl

@Suite("Reply order on a connection: replies leave in the order of the calls")
struct ReplyOrderTests {
    private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test("a lone call's reply goes out at once, and the connection is idle again")
    func loneCall() {
        var order = ReplyOrder()
        let slot = order.open()
        #expect(order.outstanding == 1)
        #expect(order.answer(slot, bytes("a"), final: true) == bytes("a"))
        #expect(order.outstanding == 0)
    }

    @Test("a later call answered first waits for the earlier one, then both leave in call order")
    func laterReplyWaits() {
        var order = ReplyOrder()
        let first = order.open()
        let second = order.open()
        let third = order.open()
        #expect(order.answer(third, bytes("3"), final: true) == [])
        #expect(order.answer(second, bytes("2"), final: true) == [])
        #expect(order.answer(first, bytes("1"), final: true) == bytes("123"))
        #expect(order.outstanding == 0)
    }

    @Test("a streaming call's continued replies go out at once; calls behind it wait for its final reply")
    func streamingCallHoldsLaterReplies() {
        var order = ReplyOrder()
        let stream = order.open()
        let after = order.open()
        #expect(order.answer(stream, bytes("s1"), final: false) == bytes("s1"))
        #expect(order.answer(after, bytes("x"), final: true) == [])
        #expect(order.answer(stream, bytes("s2"), final: false) == bytes("s2"))
        #expect(order.outstanding == 2)
        #expect(order.answer(stream, bytes("s3"), final: true) == bytes("s3x"))
        #expect(order.outstanding == 0)
    }

    @Test("a waiting streaming call's replies so far go out when it comes up, and it stays open")
    func waitingStreamComesUp() {
        var order = ReplyOrder()
        let first = order.open()
        let stream = order.open()
        #expect(order.answer(stream, bytes("s1"), final: false) == [])
        #expect(order.answer(first, bytes("1"), final: true) == bytes("1s1"))
        #expect(order.outstanding == 1)
        #expect(order.answer(stream, bytes("s2"), final: true) == bytes("s2"))
    }

    @Test("a reply to a slot already answered, or never opened, is dropped")
    func strayRepliesDropped() {
        var order = ReplyOrder()
        let slot = order.open()
        _ = order.answer(slot, bytes("a"), final: true)
        #expect(order.answer(slot, bytes("again"), final: true) == [])
        #expect(order.answer(7, bytes("never"), final: true) == [])
        #expect(order.outstanding == 0)
    }
}
