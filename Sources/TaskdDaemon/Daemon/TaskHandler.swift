import TaskScheduling

/// A registered Swift handler with its types erased: it decodes the run's payload, runs the
/// action, and returns its result encoded as JSON text (nil for a task without a result type).
package struct TaskHandler: Sendable {
    package let body: @Sendable (Run, ClockReading, any RunControls) async throws -> String?

    package init(_ body: @escaping @Sendable (Run, ClockReading, any RunControls) async throws -> String?) {
        self.body = body
    }

    /// A Swift `Duration` in whole microseconds, negative as zero.
    package static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000
    }

    /// Runs the handler for `run` to its end: how it ended, and the result it returned (JSON text).
    package func outcome(of run: Run, now: ClockReading, controls: any RunControls) async -> (
        termination: Termination, result: String?
    ) {
        do {
            return (.returned, try await body(run, now, controls))
        } catch let error as PermanentFailure {
            return (.threwNoRetry(error.reason), nil)
        } catch {
            return (.threw(String(describing: error)), nil)
        }
    }
}
