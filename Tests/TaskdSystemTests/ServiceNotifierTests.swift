import Testing

@testable import TaskdSystem

/// What waits for a service manager that does not read: bounded, in order, the latest status kept.
@Suite("Service notifications wait without blocking, coalesced")
struct ServiceNotifierTests {
    func queued(_ messages: [String]) -> [String] {
        var waiting: [String] = []
        for m in messages { ServiceNotifier.enqueue(m, into: &waiting) }
        return waiting
    }

    @Test("a manager that reads nothing for 1,000 changes and pings holds one status and one ping")
    func bounded() {
        var messages = ["READY=1\nMAINPID=7"]
        for i in 0..<1000 { messages += ["STATUS=\(i) run(s) active", "WATCHDOG=1"] }
        #expect(queued(messages) == ["READY=1\nMAINPID=7", "WATCHDOG=1", "STATUS=999 run(s) active"])
    }

    @Test("statuses never jump over READY=1, RELOADING=1 or STOPPING=1; those are never dropped")
    func ordered() {
        let waiting = queued([
            "STATUS=a", "RELOADING=1\nMONOTONIC_USEC=5\nSTATUS=Reloading configuration", "STATUS=b", "READY=1",
            "STATUS=c", "STATUS=d", "STOPPING=1\nSTATUS=Stopping: cancelling 0 run(s)", "STATUS=e",
        ])
        #expect(
            waiting == [
                "STATUS=a", "RELOADING=1\nMONOTONIC_USEC=5\nSTATUS=Reloading configuration", "STATUS=b", "READY=1",
                "STATUS=d", "STOPPING=1\nSTATUS=Stopping: cancelling 0 run(s)", "STATUS=e",
            ])
    }
}
