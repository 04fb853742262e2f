import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// The system's clocks: CLOCK_MONOTONIC and CLOCK_REALTIME in microseconds, and timers on
/// timerfds of the event loop (`DeadlineTimer`).
package struct SystemClock: DaemonClock {
    package init() {}

    package func now() -> ClockReading { Self.now() }

    package func makeTimer(_ fire: @escaping @Sendable () -> Void) -> any DaemonTimer {
        DeadlineTimer(onFire: fire) ?? SleepingTimer(fire)
    }

    /// `ContinuousClock.now` itself, to the nanosecond.
    package var continuousNow: ContinuousClock.Instant { ContinuousClock.now }

    /// CLOCK_MONOTONIC µs, placed on `ContinuousClock` by its distance from now.
    package func instant(atMonotonic micros: UInt64) -> ContinuousClock.Instant {
        let continuousNow = ContinuousClock.now
        let offset = Int64(clamping: micros) - Int64(clamping: Self.now().monotonic)
        return continuousNow.advanced(by: .microseconds(offset))
    }

    /// Both clocks now, without an instance.
    package static func now() -> ClockReading {
        ClockReading(monotonic: read(CLOCK_MONOTONIC), realtime: read(CLOCK_REALTIME))
    }

    private static func read(_ id: clockid_t) -> UInt64 {
        var ts = timespec()
        clock_gettime(id, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }
}

extension DeadlineTimer: DaemonTimer {}
