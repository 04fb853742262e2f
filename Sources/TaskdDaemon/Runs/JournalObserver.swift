import TaskScheduling

/// Journals every event the scheduler reports (docs/journal.md).
final class JournalObserver: RunEventObserver {
    let journal: EventJournal

    init(journal: EventJournal) { self.journal = journal }

    func observe(_ event: SchedulerEvent) { journal.report(event) }
}
