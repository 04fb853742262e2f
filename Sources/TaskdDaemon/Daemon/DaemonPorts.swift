import TaskScheduling
import TaskdConfig
import TaskdFleet
import TaskdMachine
import TaskdSystem

/// The outside world as the daemon sees it: time, command processes, the machine, the state folder,
/// the journal, the service manager and the configuration files. `DaemonPorts.live` in taskd;
/// in-memory ones and a `ManualClock` in tests and `TaskdTesting`.
package struct DaemonPorts: Sendable {
    package var clock: any DaemonClock
    package var commands: any CommandLauncher
    /// Makes the machine, which tells the daemon of changes through the handler it is given.
    package var machine: @Sendable (@escaping @Sendable (MachineEvent) -> Void) -> any MachinePort
    package var store: any RunStore
    package var journal: EventJournal
    package var notifier: ServiceNotifier
    /// Loads the configuration again (`Reload`, SIGHUP); called on a thread of its own.
    package var loadConfig: @Sendable () -> LoadedConfig
    /// The random source of the scheduler (`RandomizedDelaySec=`, retry jitter).
    package var random: any RandomNumberGenerator & Sendable
    /// /etc/machine-id, for `FixedRandomDelay=`.
    package var machineID: String
    /// Where the runs a restart cuts short are kept for the next start (nil: nowhere).
    package var cutRuns: CutRunsFile?
    /// Where the runs in progress are kept, for a start after a crash (nil: nowhere).
    package var activeRuns: ActiveRunsFile?
    /// Makes the fleet (`FleetEndpoints=`), which tells the daemon of lost claims and slots to take
    /// over through the handler it is given (nil: no fleet; every task runs as `Fleet=host`).
    package var fleet: (@Sendable (@escaping @Sendable (FleetEvent) -> Void) -> any FleetPort)?
    /// Where submitted tasks are kept (`taskctl submit`); one with no directory keeps none.
    package var submitted: SubmittedFolder

    package init(
        clock: any DaemonClock, commands: any CommandLauncher,
        machine: @escaping @Sendable (@escaping @Sendable (MachineEvent) -> Void) -> any MachinePort,
        store: any RunStore, journal: EventJournal, notifier: ServiceNotifier = ServiceNotifier(),
        loadConfig: @escaping @Sendable () -> LoadedConfig,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), machineID: String = "",
        cutRuns: CutRunsFile? = nil, activeRuns: ActiveRunsFile? = nil,
        fleet: (@Sendable (@escaping @Sendable (FleetEvent) -> Void) -> any FleetPort)? = nil,
        submitted: SubmittedFolder = SubmittedFolder(stateDirectory: nil)
    ) {
        self.fleet = fleet
        self.submitted = submitted
        self.cutRuns = cutRuns
        self.activeRuns = activeRuns
        self.clock = clock
        self.commands = commands
        self.machine = machine
        self.store = store
        self.journal = journal
        self.notifier = notifier
        self.loadConfig = loadConfig
        self.random = random
        self.machineID = machineID
    }
}
