import TaskScheduling

/// Where the daemon reads the time and arms its timers: the system's clocks in taskd
/// (`SystemClock`), a `ManualClock` (`TaskdTestSupport`) that only moves when a test moves it.
package protocol DaemonClock: Sendable {
    /// CLOCK_MONOTONIC and CLOCK_REALTIME now, in microseconds.
    func now() -> ClockReading
    /// A one-shot timer on this clock's monotonic readings; `fire` runs on the event loop.
    func makeTimer(_ fire: @escaping @Sendable () -> Void) -> any DaemonTimer
    /// The monotonic reading `micros` as an instant of `ContinuousClock`, the type a Swift handler
    /// reads (`TaskContext.deadline`, `now`): instants on this clock's time line, so that under a
    /// `ManualClock` a run's deadline is its start plus its budget on that clock, not in real time.
    func instant(atMonotonic micros: UInt64) -> ContinuousClock.Instant
    /// This clock's reading now, as an instant of `ContinuousClock` (`instant(atMonotonic:)`).
    var continuousNow: ContinuousClock.Instant { get }
}

extension DaemonClock {
    package var continuousNow: ContinuousClock.Instant { instant(atMonotonic: now().monotonic) }
}

/// A one-shot timer made by a `DaemonClock`: `arm(at:)` replaces its deadline, nil disarms it.
package protocol DaemonTimer: AnyObject, Sendable {
    /// Fires once at `monotonic` µs (at once if that has passed); nil disarms.
    func arm(at monotonic: UInt64?)
}
