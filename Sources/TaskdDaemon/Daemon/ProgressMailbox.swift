import Synchronization

/// The latest progress a Swift handler reported, waiting for the event loop: reports from the
/// handler's thread overwrite each other, and only the first after a delivery asks the loop to
/// come, so a handler that reports 10,000 times a second costs the loop a few visits, not 10,000.
package final class ProgressMailbox: Sendable {
    package struct Report: Sendable, Equatable {
        package var completed: Int64?
        package var total: Int64?
        package var status: String?

        package init(completed: Int64? = nil, total: Int64? = nil, status: String? = nil) {
            self.completed = completed
            self.total = total
            self.status = status
        }
    }

    package init() {}

    private let pending = Mutex<Report?>(nil)

    /// Keeps `update` applied to the waiting report; true if the loop must be asked to come.
    package func post(_ update: (inout Report) -> Void) -> Bool {
        pending.withLock { waiting in
            let first = waiting == nil
            var report = waiting ?? Report()
            update(&report)
            waiting = report
            return first
        }
    }

    /// The waiting report, taken (nil if none).
    package func take() -> Report? { pending.withLock { $0.take() } }
}
