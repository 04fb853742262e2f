import CTaskdShim
import Synchronization
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Tells when the power state changes (`PowerState`), on the event loop, without polling: from the
/// kernel's device events (a netlink socket: a supply plugged, unplugged or charging), and from
/// inotify on the folder's files (what a test writes into a sysfs-shaped folder). Reads the folder
/// again at each event and calls back only when the state differs.
package final class PowerSupplyMonitor: Sendable {
    /// The folder read: `TASKD_POWER_SUPPLY_DIR`, or `/sys/class/power_supply`.
    package let folder: String
    private let last: Mutex<PowerState>
    private let onChange: @Sendable (PowerState) -> Void
    private let inotify: Int32
    private let uevents: Int32

    package static var defaultFolder: String {
        getenv("TASKD_POWER_SUPPLY_DIR").map { String(cString: $0) } ?? "/sys/class/power_supply"
    }

    /// The state now.
    package var state: PowerState { last.withLock { $0 } }

    package init(folder: String = PowerSupplyMonitor.defaultFolder, onChange: @escaping @Sendable (PowerState) -> Void)
    {
        self.folder = folder
        self.onChange = onChange
        last = Mutex(PowerState.read(folder))
        inotify = taskd_inotify_directory(folder)
        uevents = taskd_uevent_socket()
        if inotify >= 0 {
            // The supplies' own folders too: their files change in place.
            for name in supplies(folder) { _ = taskd_inotify_add(inotify, folder + "/" + name) }
        }
        for fd in [inotify, uevents] where fd >= 0 {
            let registered = EventLoop.shared.register(fd: fd, events: EventLoop.readable) { [self] _ in
                taskd_drain(fd)
                check()
            }
            if registered == nil { close(fd) }
        }
    }

    /// Whether any source of events could be had (else the state is read once, at start).
    package var isWatching: Bool { inotify >= 0 || uevents >= 0 }

    private func check() {
        let now = PowerState.read(folder)
        let changed = last.withLock { last -> Bool in
            defer { last = now }
            return last != now
        }
        if changed { onChange(now) }
    }

}
