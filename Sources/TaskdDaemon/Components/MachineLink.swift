import TaskScheduling
import TaskdConfig
import TaskdMachine

/// The machine as the tasks need it: the conditions they require (what holds is told to the
/// scheduler), free space and pressure sampled while a run needs them, logind's inhibitor locks as
/// the scheduler takes and releases them, and system sleep.
package final class MachineLink: DaemonComponent {
    private let make: @Sendable (@escaping @Sendable (MachineEvent) -> Void) -> any MachinePort
    /// The machine, made at the daemon's start (it reports to the daemon).
    private(set) var machine: (any MachinePort)?
    /// Inhibitor locks the scheduler took or released before there was a machine.
    private var locksBeforeStart: [(SleepInhibitor, Bool)] = []
    private(set) var conditions: ConditionsInUse

    package init(config: LoadedConfig, ports: DaemonPorts) {
        make = ports.machine
        conditions = ConditionsInUse(config.tasks)
    }

    /// Makes the machine, takes the locks asked for before, and watches the conditions: a replayed
    /// wake of a task that needs AC power waits for it.
    package func start(in daemon: isolated Daemon) {
        let machine = make { [weak daemon] event in
            daemon?.onLoop { $0.component(MachineLink.self).changed(event, in: $0) }
        }
        self.machine = machine
        for (lock, hold) in locksBeforeStart { inhibit(lock, hold: hold, in: daemon) }
        locksBeforeStart = []
        watch(in: daemon)
    }

    /// The tasks changed (a reload, a task submitted or withdrawn): what they require now.
    func configure(_ tasks: [TaskDefinition], in daemon: isolated Daemon) {
        conditions.reconfigure(tasks)
        if machine != nil { watch(in: daemon) }
    }

    /// One task added (a task submitted): watched for what it requires, if that is new.
    func configure(adding d: TaskDefinition, in daemon: isolated Daemon) {
        guard !d.conditions.allSatisfy(conditions.required.contains) else { return }
        configure(daemon.scheduler.tasks.values.map(\.definition) + [d], in: daemon)
    }

    /// One task removed (a submitted task withdrawn): what the others require, if it required any.
    func configure(removing d: TaskDefinition, in daemon: isolated Daemon) {
        guard !d.conditions.isEmpty else { return }
        configure(daemon.scheduler.tasks.values.map(\.definition), in: daemon)
    }

    /// Watches what the tasks' conditions need, and gives the scheduler what does not hold now.
    /// Without any, every condition holds.
    private func watch(in daemon: isolated Daemon) {
        guard let machine else { return }
        machine.watch(for: conditions.required)
        guard !conditions.required.isEmpty else {
            // A reload removed the last condition: nothing waits for one any more.
            if !conditions.unheld.isEmpty {
                conditions.unheld = []
                daemon.perform(daemon.scheduler.conditionsChanged(unheld: [], at: daemon.clock.now()))
            }
            return
        }
        apply(always: true, source: machine.sourceNote, in: daemon)
    }

    /// Reads what holds now and, when it differs from what the scheduler knows (or `always`, as
    /// when the conditions in use changed), journals it and tells the scheduler.
    private func apply(always: Bool = false, source: String = "", in daemon: isolated Daemon) {
        guard !conditions.required.isEmpty, let machine else { return }
        let now = machine.unheld(conditions.required)
        guard always || now != conditions.unheld else { return }
        conditions.unheld = now
        daemon.journal.daemon(
            .conditionsChanged, 6, "conditions: \(machine.summary)\(source)" + conditions.unmetText, conditions.fields)
        daemon.perform(daemon.scheduler.conditionsChanged(unheld: now, at: daemon.clock.now()))
    }

    /// Free space and pressure, read afresh before a trigger is decided when no run has them
    /// sampled: a reading from the last change could be hours old.
    func refreshSampled(in daemon: isolated Daemon) {
        if conditions.sampled, let machine, !machine.isSampling { apply(in: daemon) }
    }

    /// After actions: free space and pressure are sampled while a run needs them.
    package func performed(in daemon: isolated Daemon) {
        guard conditions.sampled, let machine else { return }
        let scheduler = daemon.scheduler
        machine.sample(
            scheduler.runs.values.contains { run in
                scheduler.tasks[run.key]?.definition.conditions.contains { $0.isSampled } ?? false
            })
    }

    /// Takes or releases an inhibitor lock, as the scheduler decided.
    func inhibit(_ lock: SleepInhibitor, hold: Bool, in daemon: isolated Daemon) {
        // Before `start` (a run taken over that had already ended): applied once the machine is there.
        guard let machine else { return locksBeforeStart.append((lock, hold)) }
        machine.inhibit(lock, hold: hold)
        if lock == .delay, !hold, daemon.scheduler.isSleeping {
            daemon.journal.daemon(.systemSleeps, 6, "every run is stopped: the system may sleep")
        }
    }

    /// The machine changed: conditions may hold or not now, or the system sleeps or woke up.
    func changed(_ event: MachineEvent, in daemon: isolated Daemon) {
        guard let machine else { return }
        switch event {
        case .conditions:
            apply(in: daemon)
        case .prepareForSleep:
            guard daemon.scheduler.watchesSleep else { return }
            let maxDelay = machine.inhibitDelayMax
            let actions = daemon.scheduler.prepareForSleep(maxDelay: maxDelay, at: daemon.clock.now())
            let cancelled = actions.filter { if case .cancel = $0 { true } else { false } }.count
            daemon.journal.daemon(
                .systemSleeps, 5,
                "the system is about to sleep: cancelling \(cancelled) run(s) within \(TimeSpan(microseconds: maxDelay))",
                [("TASKD_SLEEP_CANCELLED_RUNS", String(cancelled))])
            daemon.perform(actions)
        case .resumed:
            guard daemon.scheduler.isSleeping else { return }
            let cut = daemon.scheduler.cutBySleepCount
            daemon.journal.daemon(
                .systemResumed, 5,
                "the system resumed: catching up timers"
                    + (cut == 0 ? "" : "; running again \(cut) run(s) sleep cut short"))
            daemon.perform(daemon.scheduler.resumed(at: daemon.clock.now()))
            daemon.afterChange(rearm: true)
        }
    }
}

/// The conditions the tasks require, and those of them that did not hold when last looked at.
struct ConditionsInUse: Sendable {
    /// Every condition some task requires.
    private(set) var required: Set<TaskCondition>
    /// Whether some task requires free space or pressure (read every few seconds while a run needs it).
    private(set) var sampled: Bool
    /// The required conditions that did not hold when last looked at.
    var unheld: Set<TaskCondition> = []

    init(_ tasks: [TaskDefinition]) {
        required = tasks.reduce(into: Set<TaskCondition>()) { $0.formUnion($1.conditions) }
        sampled = required.contains { $0.isSampled }
    }

    /// The tasks changed (a reload): what they require now; `unheld` is kept until looked at again.
    mutating func reconfigure(_ tasks: [TaskDefinition]) {
        let unheld = self.unheld
        self = ConditionsInUse(tasks)
        self.unheld = unheld
    }

    /// The journal's fields: the conditions that hold and those that do not.
    var fields: [(key: String, value: String)] {
        [
            ("TASKD_CONDITIONS", required.subtracting(unheld).sorted().map(\.description).joined(separator: " ")),
            ("TASKD_CONDITIONS_UNMET", unheld.sorted().map(\.description).joined(separator: " ")),
        ]
    }

    /// `; not met: …` for the journal, empty when every condition holds.
    var unmetText: String {
        unheld.isEmpty ? "" : "; not met: " + unheld.sorted().map(\.waitingText).joined(separator: ", ")
    }
}
