import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdProtocol

/// A feature with state of its own beside the scheduler's: the daemon calls its hooks (a vtable,
/// each a no-op by default) in registration order, and it answers with scheduler actions it
/// performs through the daemon. Held by the `Daemon` actor and called only with it isolated (a
/// component is not `Sendable`: the compiler keeps it on the loop). docs/architecture.md#components.
package protocol DaemonComponent: AnyObject {
    /// Made once, by the daemon's `init` (`Daemon.kinds` lists the kinds), from the configuration
    /// and the ports.
    init(config: LoadedConfig, ports: DaemonPorts)
    /// The control methods it serves: rows of the method table, beside the daemon's own.
    static var methods: [MethodRow<Daemon>] { get }
    /// The daemon starts (after a hand-off's runs were adopted, before wakes are replayed).
    func start(in daemon: isolated Daemon)
    /// A configuration was reloaded (its tasks are applied after).
    func reconfigure(_ config: LoadedConfig)
    /// A run is to start: true when the component took its start over (the fleet claims it first).
    func takeStart(of run: Run, in daemon: isolated Daemon) -> Bool
    /// A run is to be signalled (`hard`: its hard stop): the actions of its end when the component
    /// ended it instead, nil to let its handler be signalled.
    func takeSignal(of run: Run, hard: Bool, in daemon: isolated Daemon) -> [SchedulerAction]?
    /// An event the scheduler reported, before the observers hear it: false holds it back from them
    /// and from the components after this one.
    func observe(_ event: SchedulerEvent, in daemon: isolated Daemon) -> Bool
    /// A batch of actions was performed.
    func performed(in daemon: isolated Daemon)
    /// Something changed (a batch performed, a history on disk, a drain asked): answer who waits.
    func changed(in daemon: isolated Daemon)
    /// `taskctl why` of a task: the scheduler's reasons, with the component's own.
    func why(_ key: TaskKey, _ reasons: [WhyReason], at now: ClockReading, in daemon: isolated Daemon) -> [WhyReason]
    /// `taskctl status` and `list`: the task as the component sees it.
    func describe(_ info: inout TaskInfo, of state: TaskState, in daemon: isolated Daemon)
}

extension DaemonComponent {
    package static var methods: [MethodRow<Daemon>] { [] }
    package func start(in daemon: isolated Daemon) {}
    package func reconfigure(_ config: LoadedConfig) {}
    package func takeStart(of run: Run, in daemon: isolated Daemon) -> Bool { false }
    package func takeSignal(of run: Run, hard: Bool, in daemon: isolated Daemon) -> [SchedulerAction]? { nil }
    package func observe(_ event: SchedulerEvent, in daemon: isolated Daemon) -> Bool { true }
    package func performed(in daemon: isolated Daemon) {}
    package func changed(in daemon: isolated Daemon) {}
    package func why(
        _ key: TaskKey, _ reasons: [WhyReason], at now: ClockReading, in daemon: isolated Daemon
    ) -> [WhyReason] { reasons }
    package func describe(_ info: inout TaskInfo, of state: TaskState, in daemon: isolated Daemon) {}
}
