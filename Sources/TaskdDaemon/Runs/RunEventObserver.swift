import TaskScheduling

/// Something that follows what happens to runs, in the order the scheduler reports it, on the
/// event loop: the journal, the metrics, the history, the clients watching runs, a test kit. The
/// daemon's own are not `Sendable`: the `Daemon` actor holds them, so they stay on the loop.
package protocol RunEventObserver: AnyObject {
    /// One event the scheduler reported (started, progress, cancelling, killing, ended, retry…).
    func observe(_ event: SchedulerEvent)
}

/// Journals every event the scheduler reports (docs/journal.md).
final class JournalObserver: RunEventObserver {
    let journal: EventJournal

    init(journal: EventJournal) { self.journal = journal }

    func observe(_ event: SchedulerEvent) { journal.report(event) }
}
