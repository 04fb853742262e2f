import TaskScheduling

/// What the machine must be for a task's run to start, as Apple's `requiresExternalPower` and
/// WorkManager's constraints: a run triggered while one does not hold waits, holding no slot,
/// and starts the moment it holds. The same as a task file's `Require…=` keys, `MaxDeferSec=`,
/// `ConditionLost=`, `Sleep=` and `FleetUnavailable=`.
///
/// ```swift
/// .backgroundTask(.processing("BACKUP"), requires: [.acPower, .giveUpAfter(.seconds(6 * 3600))]) { … }
/// ```
public struct TaskRequirement: Sendable {
    package let apply: @Sendable (inout TaskDefinition) -> Void

    /// On AC power (a machine with no power supply to report is).
    public static var acPower: TaskRequirement { TaskRequirement { $0.conditions.insert(.acPower) } }

    /// No battery, or every battery above 15 % or charging.
    public static var batteryNotLow: TaskRequirement { TaskRequirement { $0.conditions.insert(.batteryNotLow) } }

    /// The network is online (NetworkManager's full connectivity, or systemd-networkd's `online`;
    /// with neither on the system bus, it counts as online).
    public static var network: TaskRequirement { TaskRequirement { $0.conditions.insert(.networkOnline) } }

    /// The network is online and not metered (NetworkManager's `Metered`; networkd knows of no
    /// metered networks): WorkManager's `UNMETERED`.
    public static var unmeteredNetwork: TaskRequirement {
        TaskRequirement { $0.conditions.formUnion([.networkOnline, .networkUnmetered]) }
    }

    /// The system has been idle (logind's `IdleHint`: no session in use) for at least `duration`.
    public static func idle(for duration: Duration) -> TaskRequirement {
        TaskRequirement { $0.conditions.insert(.idle(TimeSpan(duration))) }
    }

    /// At least `bytes` are free to unprivileged users in the file system that holds `path`.
    public static func freeSpace(atLeast bytes: UInt64, in path: String) -> TaskRequirement {
        TaskRequirement { $0.conditions.insert(.freeSpace(path: path, bytes: bytes)) }
    }

    /// The kernel's stall pressure on `resource` (`/proc/pressure`, the "some" line) averaged over
    /// `window` is at most `percent`, as systemd's `ConditionMemoryPressure=`.
    public static func pressure(
        _ resource: PressureResource, atMost percent: Double, over window: PressureWindow = .fiveMinutes
    ) -> TaskRequirement {
        let permyriad = Int((min(max(percent, 0), 100) * 100).rounded())
        return TaskRequirement { $0.conditions.insert(.pressure(resource, permyriad: permyriad, window: window)) }
    }

    /// The system does not sleep while a run lasts (`Sleep=block`: taskd holds a sleep block
    /// inhibitor); by default a run is cancelled before the system sleeps and runs again after.
    public static var keepsSystemAwake: TaskRequirement { TaskRequirement { $0.sleep = .block } }

    /// A run that has waited this long for the conditions gives up: outcome `cancelled`, reason
    /// `condition-timeout` (`MaxDeferSec=`). Without it a run waits for ever.
    public static func giveUpAfter(_ wait: Duration) -> TaskRequirement {
        TaskRequirement { $0.maxDefer = TimeSpan(wait) }
    }

    /// A place in the concurrency group `name` (`ConcurrencyGroup=NAME:SIZE`): at most `size` runs
    /// of the group's tasks run at a time; the others wait their turn in order, holding no slot.
    /// Every task of a group gives the same size.
    public static func concurrencyGroup(_ name: String, size: Int = 1) -> TaskRequirement {
        TaskRequirement { $0.concurrencyGroup = ConcurrencyGroup(name, size: max(1, size)) }
    }

    /// With `overlap: .allow`, at most `count` runs of the task in progress at once
    /// (`MaxInstances=`); a trigger beyond waits for one to end. By default no limit but the
    /// daemon's `MaxConcurrentRuns=`.
    public static func maxInstances(_ count: Int) -> TaskRequirement {
        TaskRequirement { $0.maxInstances = max(1, count) }
    }

    /// For a `fleet:` `.once` or `.max(n)` task, what a run does when etcd cannot be reached to
    /// claim it (`FleetUnavailable=`); by default `.skip`. `.wait` waits up to `giveUpAfter`.
    public static func whenFleetUnavailable(_ policy: FleetUnavailablePolicy) -> TaskRequirement {
        TaskRequirement { $0.fleetUnavailable = policy }
    }

    /// When one trigger starts runs of this task and of `tasks` (a wake of their kind, timers due
    /// at the same moment), this task's run waits for theirs to end (`After=`): order only, it runs
    /// whatever their outcome.
    public static func after(_ tasks: String...) -> TaskRequirement { TaskRequirement { $0.after += tasks } }

    /// A run starts from the beginning, never from the checkpoint an earlier run kept
    /// (`ResumeFrom=start`); by default `context.resumeState` hands it over.
    public static var resumeFromStart: TaskRequirement { TaskRequirement { $0.resumeFrom = .start } }

    /// A run in progress goes on when a condition stops holding (`ConditionLost=continue`); by
    /// default it is cancelled as at its budget, reason `condition-lost`.
    public static var continueWhenLost: TaskRequirement { TaskRequirement { $0.conditionLost = .continue } }
}
