import TaskScheduling

/// Where the daemon reads the time and arms its timers: the system's clocks in taskd
/// (`SystemClock`), a `ManualClock` that only moves when a test moves it.
package protocol DaemonClock: Sendable {
    /// CLOCK_MONOTONIC and CLOCK_REALTIME now, in microseconds.
    func now() -> ClockReading
    /// A one-shot timer on this clock's monotonic readings; `fire` runs on the event loop.
    func makeTimer(_ fire: @escaping @Sendable () -> Void) -> any DaemonTimer
}

/// A one-shot timer made by a `DaemonClock`: `arm(at:)` replaces its deadline, nil disarms it.
package protocol DaemonTimer: AnyObject, Sendable {
    /// Fires once at `monotonic` µs (at once if that has passed); nil disarms.
    func arm(at monotonic: UInt64?)
}
