/// A resource the kernel reports stall pressure for (`/proc/pressure/…`), as systemd's
/// `ConditionCPUPressure=`, `ConditionMemoryPressure=` and `ConditionIOPressure=`.
public enum PressureResource: String, Hashable, Sendable, CaseIterable {
    case cpu
    case memory
    case io
}
