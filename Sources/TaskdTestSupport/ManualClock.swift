import Synchronization
import TaskScheduling
import TaskdDaemon
import TaskdIO

/// A clock that moves only when a test moves it (`TaskdTesting`, the daemon's unit tests): both
/// readings advance together, and the timers it made fire, each on the event loop as a job of its
/// own, at their deadlines as the clock passes them.
package final class ManualClock: DaemonClock {
    private struct State {
        var reading: ClockReading
        var deadlines: [ObjectIdentifier: (due: UInt64, fire: @Sendable () -> Void)] = [:]
    }

    private let state: Mutex<State>
    /// Where `start` lies on `ContinuousClock` (the real time the clock was made): its readings
    /// are instants that far from there, whatever real time has passed since.
    private let anchor: (instant: ContinuousClock.Instant, monotonic: UInt64)

    /// A clock standing at `start` (any instants do: tests see durations).
    package init(start: ClockReading = ManualClock.origin) {
        state = Mutex(State(reading: start))
        anchor = (ContinuousClock.now, start.monotonic)
    }

    /// 2026-01-01 00:00:00 UTC, 1,000 s after boot.
    package static let origin = ClockReading(monotonic: 1_000_000_000, realtime: 1_767_225_600_000_000)

    package func now() -> ClockReading { state.withLock { $0.reading } }

    package func makeTimer(_ fire: @escaping @Sendable () -> Void) -> any DaemonTimer { Timer(clock: self, fire: fire) }

    /// `micros` on this clock's time line: the anchor plus its distance from the start reading.
    package func instant(atMonotonic micros: UInt64) -> ContinuousClock.Instant {
        anchor.instant.advanced(by: .microseconds(Int64(clamping: micros) - Int64(clamping: anchor.monotonic)))
    }

    /// Moves the clock forward by `micros`, firing every timer that falls due on the way at its
    /// deadline, in order; returns once what they started on the event loop has run.
    package func advance(by micros: UInt64) async {
        let target = now().monotonic &+ micros
        while let fire = takeDue(upTo: target) { await Self.onLoop(fire) }
        state.withLock { s in
            if target > s.reading.monotonic { s.reading = s.reading.advanced(by: target - s.reading.monotonic) }
        }
        await Self.onLoop {}
    }

    /// The earliest timer due at or before `target`, disarmed, with the clock moved to its deadline.
    private func takeDue(upTo target: UInt64) -> (@Sendable () -> Void)? {
        state.withLock { s in
            guard let (id, next) = s.deadlines.min(by: { $0.value.due < $1.value.due }), next.due <= target else {
                return nil
            }
            s.deadlines[id] = nil
            if next.due > s.reading.monotonic { s.reading = s.reading.advanced(by: next.due - s.reading.monotonic) }
            return next.fire
        }
    }

    fileprivate func arm(_ timer: ObjectIdentifier, at due: UInt64?, fire: @escaping @Sendable () -> Void) {
        state.withLock { $0.deadlines[timer] = due.map { ($0, fire) } }
    }

    /// The earliest armed deadline (monotonic µs), if any.
    package var nextDeadline: UInt64? { state.withLock { $0.deadlines.values.map(\.due).min() } }

    /// Runs `body` on the event loop's thread, as a job of its own, and returns once it has run
    /// together with the work it left for after the handlers it started.
    package static func onLoop(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Task(executorPreference: EventLoop.shared) {
                body()
                EventLoop.shared.afterHandlerJobs { done.resume() }
            }
        }
    }

    private final class Timer: DaemonTimer {
        weak let clock: ManualClock?
        let fire: @Sendable () -> Void

        init(clock: ManualClock, fire: @escaping @Sendable () -> Void) {
            self.clock = clock
            self.fire = fire
        }

        func arm(at monotonic: UInt64?) { clock?.arm(ObjectIdentifier(self), at: monotonic, fire: fire) }

        deinit { clock?.arm(ObjectIdentifier(self), at: nil, fire: {}) }
    }
}
