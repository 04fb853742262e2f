import TaskScheduling

/// A Swift handler's run's controls in the daemon: requests go to the daemon on its event loop;
/// progress waits in a mailbox, of which the loop takes the latest. One allocation per run.
final class SwiftRunControls: RunControls {
    private let daemon: Daemon
    private let runID: String
    private let key: TaskKey
    private let mailbox = ProgressMailbox()

    init(daemon: Daemon, run: Run) {
        self.daemon = daemon
        self.runID = run.id
        self.key = run.key
    }

    func scheduleNext(_ delay: Duration) {
        let key = self.key
        daemon.onLoop { $0.requestRun(key, after: delay) }
    }

    func progress(completed: Int64, total: Int64?) {
        deliver(mailbox.post { ($0.completed, $0.total) = (completed, total) })
    }

    func status(_ text: String) { deliver(mailbox.post { $0.status = text }) }

    var clock: any DaemonClock { daemon.clock }

    func checkpoint(_ value: String) async -> String? {
        let runID = self.runID
        return await withCheckedContinuation { continuation in
            daemon.onLoop { $0.checkpointed(runID: runID, value) { continuation.resume(returning: $0) } }
        }
    }

    private func deliver(_ first: Bool) {
        guard first else { return }
        daemon.onLoop { [self] in $0.progressReported(runID: runID, mailbox.take()) }
    }
}
