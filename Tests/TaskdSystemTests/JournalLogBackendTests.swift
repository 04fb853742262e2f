import Synchronization
import TaskdSystem
import TaskdTestSupport
import Testing

/// The journal backend without a journald: the fallback gets the entries, a batch at once.
struct JournalLogBackendTests {
    @Test(
        "with no journald socket, a batch goes to the fallback whole and in order",
        .enabled(if: !JournalLogBackend.isAvailable, "a journald listens at the standard path")
    )
    func fallbackTakesTheBatch() {
        let fallback = LogRecorder()
        let journal = JournalLogBackend(fallback: fallback)
        let entries = (0..<10).map { LogEntry([("MESSAGE", "event \($0)")]) }
        journal.send(batch: entries[...])
        journal.send(LogEntry([("MESSAGE", "alone")]))
        #expect(fallback.batches == [(0..<10).map { "event \($0)" }, ["alone"]])
    }
}
