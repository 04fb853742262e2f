import CTaskdShim
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One CLOCK_MONOTONIC timerfd on the event loop: `arm(at:)` replaces the deadline, and `onFire`
/// runs on the event-loop thread when it passes. Used instead of `Task.sleep`, whose Dispatch timer
/// may fire hundreds of microseconds late; a timerfd wakes the loop within the kernel's slack.
public final class DeadlineTimer: Sendable {
    private let fd: Int32
    private let token = Mutex<UInt64?>(nil)

    /// nil if no timerfd could be made (the caller falls back to sleeping).
    public init?(onFire: @escaping @Sendable () -> Void) {
        fd = taskd_monotonic_timer()
        guard fd >= 0 else { return nil }
        let fd = self.fd
        let registered = EventLoop.shared.register(fd: fd, events: EventLoop.readable) { _ in
            var expirations: UInt64 = 0
            guard read(fd, &expirations, 8) == 8 else { return }  // EAGAIN: re-armed meanwhile
            onFire()
        }
        guard let registered else {
            close(fd)
            return nil
        }
        token.withLock { $0 = registered }
    }

    /// Now on CLOCK_MONOTONIC, the clock `arm(at:)` takes, in microseconds.
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    /// Fires once at `usec` on CLOCK_MONOTONIC (at once if that has passed); nil disarms.
    public func arm(at usec: UInt64?) {
        _ = taskd_monotonic_timer_arm(fd, usec.map { max($0, 1) } ?? 0)
    }

    deinit {
        if let t = token.withLock({ $0 }) { EventLoop.shared.deregister(fd: fd, token: t) }
        close(fd)
    }
}
