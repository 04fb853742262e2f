/// Whether the network is online and metered, as NetworkManager or systemd-networkd says.
package struct NetworkState: Hashable, Sendable, CustomStringConvertible {
    /// Who said it.
    package enum Source: String, Hashable, Sendable {
        case networkManager = "NetworkManager"
        case networkd = "systemd-networkd"
        /// Neither is on the system bus: the network counts as online and not metered, as on a
        /// server whose network nothing manages.
        case none = "no network manager"
    }

    package var source: Source
    package var online: Bool
    package var metered: Bool

    package init(source: Source = .none, online: Bool = true, metered: Bool = false) {
        self.source = source
        self.online = online
        self.metered = metered
    }

    /// NetworkManager's `State`, `Connectivity` and `Metered`: online with full connectivity, or
    /// connected globally when its connectivity check is off (connectivity unknown); metered when
    /// it says yes or guesses yes.
    package static func networkManager(state: UInt32, connectivity: UInt32, metered: UInt32) -> NetworkState {
        let online = connectivity == 4 || (connectivity == 0 && state == 70)
        return NetworkState(source: .networkManager, online: online, metered: metered == 1 || metered == 3)
    }

    /// systemd-networkd's `OnlineState` (or, where it has none, `OperationalState` routable); it
    /// has no notion of metered networks.
    package static func networkd(onlineState: String, operationalState: String) -> NetworkState {
        let online = onlineState == "online" || (onlineState.isEmpty && operationalState == "routable")
        return NetworkState(source: .networkd, online: online, metered: false)
    }

    package var description: String {
        (online ? "online" : "offline") + (metered ? ", metered" : "") + " (\(source.rawValue))"
    }
}
