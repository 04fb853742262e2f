/// What the system bus said last: logind's idle and sleep settings, taskd's inhibitors, the network.
public struct SystemBusState: Hashable, Sendable {
    /// logind answered (without it the system counts as idle and sleep is not watched).
    public var logind = false
    /// logind's `IdleHint`, and since when (`IdleSinceHintMonotonic`, CLOCK_MONOTONIC µs).
    public var idle = true
    public var idleSinceMonotonic: UInt64 = 0
    /// logind's `InhibitDelayMaxUSec`: how long a delay inhibitor may hold sleep back.
    public var inhibitDelayMax: UInt64 = 5_000_000
    /// taskd holds its sleep delay inhibitor / a sleep block inhibitor.
    public var holdsDelayInhibitor = false
    public var holdsBlockInhibitor = false
    public var network = NetworkState()

    public init() {}
}
