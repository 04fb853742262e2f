import CTaskdShim
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Calls back when the wall clock is set (a jump, NTP stepping it, `date -s`), through a
/// CLOCK_REALTIME timerfd with TFD_TIMER_CANCEL_ON_SET, and when the local time zone changes
/// (`/etc/localtime` replaced, as `timedatectl set-timezone` does), through inotify on `/etc`.
/// Both wait on the event loop: no polling, no wake-ups.
public final class ClockChangeWatcher: Sendable {
    private let fd: Int32
    private let zoneFD: Int32

    /// Nil when the kernel offers no such timerfd. `onZoneChange` is not called if `/etc` cannot be watched.
    public init?(onChange: @escaping @Sendable () -> Void, onZoneChange: @escaping @Sendable () -> Void) {
        // The timerfd first: if it cannot be had, nothing has been registered yet.
        let fd = taskd_clock_change_fd()
        guard fd >= 0 else { return nil }
        let registered = EventLoop.shared.register(fd: fd, events: EventLoop.readable) { _ in
            var expirations: UInt64 = 0
            if read(fd, &expirations, 8) < 0 && errno == ECANCELED {
                _ = taskd_clock_change_rearm(fd)
                onChange()
            }
        }
        guard registered != nil else {
            close(fd)
            return nil
        }
        self.fd = fd
        let zoneFD = taskd_inotify_directory("/etc")
        self.zoneFD = zoneFD
        guard zoneFD >= 0 else { return }
        let zoneRegistered = EventLoop.shared.register(fd: zoneFD, events: EventLoop.readable) { _ in
            if taskd_inotify_saw(zoneFD, "localtime") == 1 { onZoneChange() }
        }
        if zoneRegistered == nil { close(zoneFD) }
    }
}
