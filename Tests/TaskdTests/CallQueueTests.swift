import TaskdProtocol
import Testing

@testable import TaskdSystem

@Suite("A connection's waiting calls")
struct CallQueueTests {
    @Test("calls queued before the stream is asked for come out of it in order, then it finishes")
    func queuedThenRead() async {
        var q = CallQueue()
        q.yield(VarlinkCall(method: "a.b.C"))
        q.yield(VarlinkCall(method: "a.b.D"))
        q.finish()
        var methods: [String] = []
        for await call in q.stream() { methods.append(call.method) }
        #expect(methods == ["a.b.C", "a.b.D"])
    }

    @Test(
        "a stream first asked for after the connection finished is finished too, not left open", .timeLimit(.minutes(1))
    )
    func finishedBeforeMade() async {
        var q = CallQueue()
        q.finish()
        var count = 0
        for await _ in q.stream() { count += 1 }
        #expect(count == 0)
    }
}
