import Synchronization

/// The latest progress a Swift handler reported, waiting for whoever applies it: reports from the
/// handler's thread overwrite each other, and only the first after a delivery asks for one, so a
/// handler that reports 10,000 times a second costs the event loop a few visits, not 10,000.
package struct ProgressMailbox: ~Copyable, Sendable {
    package struct Report: Sendable, Equatable {
        package var completed: Int64?
        package var total: Int64?
        package var status: String?
        /// A command's `RESULT=`: the run's result, as JSON text.
        package var result: String?
        /// A command's `CHECKPOINT=`: the text to hand the task's next run.
        package var checkpoint: String?

        package init(
            completed: Int64? = nil, total: Int64? = nil, status: String? = nil, result: String? = nil,
            checkpoint: String? = nil
        ) {
            self.completed = completed
            self.total = total
            self.status = status
            self.result = result
            self.checkpoint = checkpoint
        }
    }

    private let pending = Mutex<Report?>(nil)

    package init() {}

    /// Keeps `update` applied to the waiting report; true if a delivery must be asked for.
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
