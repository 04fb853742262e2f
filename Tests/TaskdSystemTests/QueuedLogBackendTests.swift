import Foundation
import Synchronization
import TaskdIO
import TaskdTestSupport
import Testing

@testable import TaskdSystem

/// A backend that holds every send until released, as a stopped journald would.
final class StalledBackend: LogBackend {
    let gate = DispatchSemaphore(value: 0)
    let received = Mutex<[LogEntry]>([])

    func send(_ entry: LogEntry) {
        gate.wait()
        gate.signal()
        received.withLock { $0.append(entry) }
    }
}

/// A line of handler output, as EventJournal makes it.
func output(_ message: String, _ stream: String) -> LogEntry {
    var entry = LogEntry([("MESSAGE", message), ("TASK_STREAM", stream)])
    entry.sheddable = true
    return entry
}

@Suite("The journal queue: order kept, handler output shed under a backlog, events never")
struct QueuedLogBackendTests {
    @Test("with journald stalled, output beyond the backlog is shed and counted; every event arrives, in order")
    func backlog() {
        let stalled = StalledBackend()
        let queue = QueuedLogBackend(base: stalled)
        let limit = QueuedLogBackend.outputBacklog
        var events = 0
        for i in 0..<(limit + 5000) {
            queue.send(output("line \(i)", "stdout"))
            if i % 1000 == 0 {
                queue.send(LogEntry([("MESSAGE", "event \(i)")]))
                events += 1
            }
        }
        stalled.gate.signal()  // journald is back
        queue.flush()
        let received = stalled.received.withLock { $0 }
        let output = received.filter { $0["TASK_STREAM"] != nil }
        let eventEntries = received.filter { $0["TASK_STREAM"] == nil && $0["TASKD_OUTPUT_SHED"] == nil }
        #expect(eventEntries.count == events)
        // The backlog filled with the first lines and the events sent meanwhile; later lines were shed.
        let eventsBeforeFull = eventEntries.filter { Int($0.message.dropFirst(6))! < output.count }.count
        #expect(output.count + eventsBeforeFull == limit)
        #expect(output.map(\.message) == (0..<output.count).map { "line \($0)" })
        let shed = received.filter { $0["TASKD_OUTPUT_SHED"] != nil }
        #expect(shed.map { $0["TASKD_OUTPUT_SHED"] } == [String(limit + 5000 - output.count)])
        #expect(shed.first?["PRIORITY"] == "4")
    }

    @Test("below the backlog nothing is shed")
    func noBacklog() {
        let stalled = StalledBackend()
        stalled.gate.signal()
        let queue = QueuedLogBackend(base: stalled)
        for i in 0..<1000 { queue.send(output("\(i)", "stderr")) }
        queue.flush()
        #expect(stalled.received.withLock { $0.map(\.message) } == (0..<1000).map(String.init))
    }

    @Test("entries are handed on in order, in batches of at most `slice` (one write, one journald check each)")
    func batches() {
        let recorder = LogRecorder()
        let queue = QueuedLogBackend(base: recorder)
        let count = QueuedLogBackend.slice * 3 + 5
        for i in 0..<count { queue.send(output("\(i)", "stdout")) }
        queue.flush()
        let batches = recorder.batches
        #expect(batches.flatMap { $0 } == (0..<count).map(String.init))
        #expect(batches.count >= 4 && batches.allSatisfy { $0.count <= QueuedLogBackend.slice })
    }

    @Test(
        "a lazy entry is made on the queue's thread, not the sender's, in order with the others",
        .timeLimit(.minutes(1)))
    func lazyEntries() {
        let recorder = LogRecorder()
        let queue = QueuedLogBackend(base: recorder)
        let sender = pthread_self()
        let madeOnSender = Mutex<Bool?>(nil)
        queue.send(LogEntry([("MESSAGE", "first")]))
        queue.send(lazy: {
            madeOnSender.withLock { $0 = pthread_equal(pthread_self(), sender) != 0 }
            return LogEntry([("MESSAGE", "second")])
        })
        queue.send(output("third", "stdout"))
        // Not `flush()`: `sync` may drain on this thread. Wait for the queue's own drain (the time
        // limit bounds it).
        while recorder.entries.count < 3 { usleep(1000) }
        #expect(recorder.entries.map(\.message) == ["first", "second", "third"])
        #expect(madeOnSender.withLock { $0 } == false)
    }

    @Test(
        "an entry sent soon after a drain waits for the pace: the queue's thread wakes once per `pace` under load",
        .timeLimit(.minutes(1)))
    func paced() {
        let recorder = LogRecorder()
        let queue = QueuedLogBackend(base: recorder)
        let start = DeadlineTimer.now()
        queue.send(LogEntry([("MESSAGE", "first")]))
        while recorder.batches.isEmpty { usleep(100) }
        queue.send(LogEntry([("MESSAGE", "second")]))
        queue.send(LogEntry([("MESSAGE", "third")]))
        while recorder.entries.count < 3 { usleep(100) }
        // The first drain started after `start`; the next could not start before it plus the pace.
        #expect(DeadlineTimer.now() - start >= QueuedLogBackend.pace)
        #expect(recorder.entries.map(\.message) == ["first", "second", "third"])
    }

    @Test(
        "a barrier is called once every entry sent before it is handed on, without waiting for the pace",
        .timeLimit(.minutes(1)))
    func barrier() {
        let recorder = LogRecorder()
        // A pace longer than the time limit: a barrier that waited for it would fail the test.
        let queue = QueuedLogBackend(base: recorder, pace: 3_600_000_000)
        queue.send(LogEntry([("MESSAGE", "first")]))
        queue.send(LogEntry([("MESSAGE", "second")]))
        queue.send(lazy: { LogEntry([("MESSAGE", "third")]) })
        let seen = Mutex<[String]?>(nil)
        queue.whenHandedOn { seen.withLock { $0 = recorder.entries.map(\.message) } }
        queue.send(LogEntry([("MESSAGE", "after")]))
        while seen.withLock({ $0 == nil }) { usleep(100) }
        #expect(Array(seen.withLock { $0 }!.prefix(3)) == ["first", "second", "third"])
    }

    @Test("a plain backend calls a barrier at once: it hands entries on as it is sent them")
    func plainBarrier() {
        let called = Mutex(false)
        LogRecorder().whenHandedOn { called.withLock { $0 = true } }
        #expect(called.withLock { $0 })
    }
}
