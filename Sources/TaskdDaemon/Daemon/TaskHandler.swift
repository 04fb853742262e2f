import TaskScheduling

/// A registered Swift handler with its types erased: it decodes the run's payload, runs the
/// action, and returns its result encoded as JSON text (nil for a task without a result type).
package struct TaskHandler: Sendable {
    let body: @Sendable (Run, ClockReading) async throws -> String?

    package init(_ body: @escaping @Sendable (Run, ClockReading) async throws -> String?) { self.body = body }

    func callAsFunction(_ run: Run, now: ClockReading) async throws -> String? { try await body(run, now) }

    /// Runs the handler for `run` to its end: how it ended, and the result it returned (JSON text).
    package func outcome(of run: Run, now: ClockReading) async -> (termination: Termination, result: String?) {
        do {
            return (.returned, try await body(run, now))
        } catch let error as PermanentFailure {
            return (.threwNoRetry(error.reason), nil)
        } catch {
            return (.threw(String(describing: error)), nil)
        }
    }
}
