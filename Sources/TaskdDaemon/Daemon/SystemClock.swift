import TaskScheduling

#if canImport(Glibc)
    import Glibc
#endif

/// Reads CLOCK_MONOTONIC and CLOCK_REALTIME in microseconds.
enum SystemClock {
    static func now() -> ClockReading {
        ClockReading(monotonic: read(CLOCK_MONOTONIC), realtime: read(CLOCK_REALTIME))
    }

    private static func read(_ id: clockid_t) -> UInt64 {
        var ts = timespec()
        clock_gettime(id, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }
}
