import Testing

@testable import TaskdMachine

/// How NetworkManager's and systemd-networkd's properties read as online and metered.
@Suite("NetworkState: NetworkManager and networkd properties as online and metered")
struct NetworkStateTests {
    @Test(
        "NetworkManager: full connectivity is online; with its check off, connected-global is",
        arguments: [
            (70 as UInt32, 4 as UInt32, true), (70, 1, false), (70, 3, false), (70, 0, true), (60, 0, false),
            (20, 0, false),
        ])
    func networkManagerOnline(state: UInt32, connectivity: UInt32, online: Bool) {
        #expect(NetworkState.networkManager(state: state, connectivity: connectivity, metered: 2).online == online)
    }

    @Test("NetworkManager: metered when it says yes or guesses yes; unknown and no are not")
    func metered() {
        let metered = (0...4).map {
            NetworkState.networkManager(state: 70, connectivity: 4, metered: UInt32($0)).metered
        }
        #expect(metered == [false, true, false, true, false])
    }

    @Test("networkd: OnlineState online, or routable where it has no OnlineState; never metered")
    func networkd() {
        #expect(NetworkState.networkd(onlineState: "online", operationalState: "degraded").online)
        #expect(!NetworkState.networkd(onlineState: "partial", operationalState: "routable").online)
        #expect(!NetworkState.networkd(onlineState: "offline", operationalState: "no-carrier").online)
        #expect(NetworkState.networkd(onlineState: "", operationalState: "routable").online)
        #expect(!NetworkState.networkd(onlineState: "online", operationalState: "routable").metered)
        #expect(
            NetworkState.networkd(onlineState: "online", operationalState: "routable").description
                == "online (systemd-networkd)")
    }

    @Test("no network manager on the bus: online and not metered, and it says why")
    func none() {
        let state = NetworkState()
        #expect(state.online && !state.metered && state.description == "online (no network manager)")
    }
}
