import CTaskdShim
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Calls back when the wall clock is set (a jump, NTP stepping it, `date -s`), through a
/// CLOCK_REALTIME timerfd with TFD_TIMER_CANCEL_ON_SET on the event loop. No polling, no wake-ups.
public final class ClockChangeWatcher: Sendable {
    private let fd: Int32

    /// Nil when the kernel offers no such timerfd.
    public init?(onChange: @escaping @Sendable () -> Void) {
        let fd = taskd_clock_change_fd()
        guard fd >= 0 else { return nil }
        self.fd = fd
        let registered = EventLoop.shared.register(fd: fd, events: EventLoop.readable) { _ in
            var expirations: UInt64 = 0
            let n = read(fd, &expirations, 8)
            if n < 0 && errno == ECANCELED {
                _ = taskd_clock_change_rearm(fd)
                onChange()
            }
        }
        if registered == nil {
            close(fd)
            return nil
        }
    }
}
