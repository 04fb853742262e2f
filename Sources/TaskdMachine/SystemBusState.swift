/// What the system bus said last: logind's idle and sleep settings, taskd's inhibitors, the network.
package struct SystemBusState: Hashable, Sendable {
    /// logind answered (without it the system counts as idle and sleep is not watched).
    package var logind = false
    /// logind's `IdleHint`, and since when (`IdleSinceHintMonotonic`, CLOCK_MONOTONIC µs).
    package var idle = true
    package var idleSinceMonotonic: UInt64 = 0
    /// logind's `InhibitDelayMaxUSec`: how long a delay inhibitor may hold sleep back.
    package var inhibitDelayMax: UInt64 = 5_000_000
    /// taskd holds its sleep delay inhibitor / a sleep block inhibitor.
    package var holdsDelayInhibitor = false
    package var holdsBlockInhibitor = false
    package var network = NetworkState()

    package init() {}
}
