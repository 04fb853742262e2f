/// Something the machine must be for a task's run to start (`RequireACPower=`,
/// `RequireBatteryNotLow=`, Swift `requires:`): a run triggered while one does not hold waits.
public enum TaskCondition: String, Hashable, Sendable, CaseIterable, Comparable {
    /// On AC power (or no power supply reports otherwise: a desktop, a server, a VM).
    case acPower = "ac-power"
    /// No battery, or every battery above 15 % or charging.
    case batteryNotLow = "battery-not-low"

    /// How `taskctl status` says what a run waits for: `on AC power`.
    public var waitingText: String {
        switch self {
        case .acPower: return "on AC power"
        case .batteryNotLow: return "battery not low"
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}
