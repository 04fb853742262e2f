import TaskdControl

/// The control service of a daemon, logging to its journal.
extension ControlService where Scheduler == Daemon {
    init(daemon: Daemon, journal: EventJournal, product: String = "taskd", version: String = TaskdVersion.current) {
        self.init(scheduler: daemon, log: JournalControlLog(journal: journal), product: product, version: version)
    }
}
