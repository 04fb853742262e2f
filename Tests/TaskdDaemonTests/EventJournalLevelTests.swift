import Synchronization
import TaskdSystem
import TaskdTestSupport
import Testing

@testable import TaskdDaemon

@Suite("The journal's daemon entries and the backend's level")
struct EventJournalLevelTests {
    @Test("a lazy entry above the backend's level is neither made nor sent; one within it is")
    func lazyBelowLevel() {
        let recorder = LogRecorder()
        let journal = EventJournal(backend: LevelledBackend(recorder, maxPriority: 6))
        let made = Mutex(0)
        journal.daemon(.request, 7) {
            made.withLock { $0 += 1 }
            return ("debug request", [])
        }
        journal.daemon(.request, 6) {
            made.withLock { $0 += 1 }
            return ("info request", [])
        }
        #expect(made.withLock { $0 } == 1, "only the entry the backend keeps is formatted")
        #expect(recorder.entries.map(\.message) == ["info request"])
        #expect(StderrLogBackend().keeps(priority: 6) && !StderrLogBackend().keeps(priority: 7))
    }
}

/// A recorder that keeps entries up to `maxPriority`, as `StderrLogBackend` does.
private struct LevelledBackend: LogBackend {
    let recorder: LogRecorder
    let maxPriority: Int
    init(_ recorder: LogRecorder, maxPriority: Int) {
        self.recorder = recorder
        self.maxPriority = maxPriority
    }
    func send(_ entry: LogEntry) { recorder.send(entry) }
    func keeps(priority: Int) -> Bool { priority <= maxPriority }
}
