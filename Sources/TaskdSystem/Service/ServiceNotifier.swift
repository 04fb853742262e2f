import CSystemd
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Talks to the service manager through `$NOTIFY_SOCKET` (`sd_notify`); a no-op without one.
///
/// `notify(_:)` never blocks its caller. `sd_notify` blocks while the manager's socket queue is full
/// (10 datagrams by default, `net.unix.max_dgram_qlen`), and a manager that stops reading, or reads
/// late, must not stall the event loop that sends `STATUS=` after every change. Messages are sent
/// in order from a serial queue. While they wait to be taken, a `STATUS=`-only message replaces the
/// status lines waiting since the last other message (`READY=1`, `STOPPING=1`, …), and a
/// `WATCHDOG=1` is dropped if a ping already waits: a stuck manager costs a bounded backlog.
public final class ServiceNotifier: Sendable {
    private let queue = DispatchQueue(label: "taskd.notify")
    /// Messages not yet taken for sending, and whether the queue is sending.
    private let waiting = Mutex<(messages: [String], sending: Bool)>(([], false))

    /// False without `$NOTIFY_SOCKET` (not started by a service manager): nothing is queued.
    public let hasManager = getenv("NOTIFY_SOCKET") != nil

    public init() {}

    /// Queues `state` (`READY=1`, `STATUS=…`, …) for the manager; returns at once.
    public func notify(_ state: String) {
        guard hasManager else { return }
        let start = waiting.withLock { w in
            Self.enqueue(state, into: &w.messages)
            if w.sending { return false }
            w.sending = true
            return true
        }
        if start { queue.async { self.sendWaiting() } }
    }

    /// Waits until every message queued so far was handed to the manager (or dropped without one),
    /// but no longer than `seconds`: false if the manager was still not reading by then.
    @discardableResult
    public func flush(waitingAtMost seconds: Int) -> Bool {
        let done = DispatchSemaphore(value: 0)
        queue.async { done.signal() }
        return done.wait(timeout: .now() + .seconds(seconds)) == .success
    }

    /// Adds `message` to the messages waiting to be sent, coalescing as the type's doc says.
    static func enqueue(_ message: String, into waiting: inout [String]) {
        func isStatusOnly(_ s: String) -> Bool { s.hasPrefix("STATUS=") && !s.utf8.contains(UInt8(ascii: "\n")) }
        if message == "WATCHDOG=1" {
            if !waiting.contains(message) { waiting.append(message) }
            return
        }
        if isStatusOnly(message) {
            let since = (waiting.lastIndex { !isStatusOnly($0) && $0 != "WATCHDOG=1" } ?? -1) + 1
            waiting.replaceSubrange(since..., with: waiting[since...].filter { !isStatusOnly($0) })
        }
        waiting.append(message)
    }

    /// Sends what waits, oldest first (on `queue`), until nothing does.
    private func sendWaiting() {
        while true {
            let next = waiting.withLock { w -> String? in
                if w.messages.isEmpty {
                    w.sending = false
                    return nil
                }
                return w.messages.removeFirst()
            }
            guard let next else { return }
            _ = sd_notify(0, next)
        }
    }

    /// Half the watchdog interval the manager asked for (`WATCHDOG_USEC`), in microseconds, or nil.
    public var watchdogPetInterval: UInt64? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return usec / 2
    }
}
