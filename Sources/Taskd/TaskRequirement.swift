import TaskScheduling

/// What the machine must be for a task's run to start, as Apple's `requiresExternalPower` and
/// WorkManager's constraints: a run triggered while one does not hold waits, holding no slot,
/// and starts the moment it holds. The same as a task file's `RequireACPower=`,
/// `RequireBatteryNotLow=`, `MaxDeferSec=` and `ConditionLost=`.
///
/// ```swift
/// .backgroundTask(.processing("BACKUP"), requires: [.acPower, .giveUpAfter(.seconds(6 * 3600))]) { … }
/// ```
public struct TaskRequirement: Sendable {
    let apply: @Sendable (inout TaskDefinition) -> Void

    /// On AC power (a machine with no power supply to report is).
    public static var acPower: TaskRequirement { TaskRequirement { $0.conditions.insert(.acPower) } }

    /// No battery, or every battery above 15 % or charging.
    public static var batteryNotLow: TaskRequirement { TaskRequirement { $0.conditions.insert(.batteryNotLow) } }

    /// A run that has waited this long for the conditions gives up: outcome `cancelled`, reason
    /// `condition-timeout` (`MaxDeferSec=`). Without it a run waits for ever.
    public static func giveUpAfter(_ wait: Duration) -> TaskRequirement {
        TaskRequirement { $0.maxDefer = TimeSpan(wait) }
    }

    /// A run in progress goes on when a condition stops holding (`ConditionLost=continue`); by
    /// default it is cancelled as at its budget, reason `condition-lost`.
    public static var continueWhenLost: TaskRequirement { TaskRequirement { $0.conditionLost = .continue } }
}
