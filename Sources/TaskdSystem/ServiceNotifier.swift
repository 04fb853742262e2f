import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// Talks to the service manager through `$NOTIFY_SOCKET` (`sd_notify`); a no-op without one.
public struct ServiceNotifier: Sendable {
    public init() {}

    /// Sends `state` (`READY=1`, `STATUS=…`, …); true if a manager received it.
    @discardableResult
    public func notify(_ state: String) -> Bool { sd_notify(0, state) > 0 }

    /// Half the watchdog interval the manager asked for (`WATCHDOG_USEC`), in microseconds, or nil.
    public var watchdogPetInterval: UInt64? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return usec / 2
    }
}
