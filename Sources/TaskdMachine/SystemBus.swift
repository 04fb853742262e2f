import CTaskdBus
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// taskd's connection to the system bus, driven from the event loop: logind's `PrepareForSleep`,
/// its inhibitors and idle state, and the network state from NetworkManager or systemd-networkd.
/// Every call is asynchronous and `onEvent` runs on the event loop; use it only from the loop.
/// Unchecked for sendability because sd-bus is single-threaded and not re-entrant: the loop's fd handler
/// is its one driver, and a lock would deadlock on the calls its callbacks make back into it
/// (a sleep signal releasing an inhibitor); `processing` orders those instead.
package final class SystemBus: @unchecked Sendable {
    private var bus: OpaquePointer?
    private var token: UInt64?
    private var fd: Int32 = -1
    private var timer: DeadlineTimer?
    /// True while sd-bus dispatches: a call made from a callback (the daemon releasing an
    /// inhibitor as it hears of sleep) is sent when the dispatching ends; sd-bus is not re-entrant.
    private var processing = false
    private let onEvent: @Sendable (MachineEvent) -> Void

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured); nil if there is none.
    package init?(onEvent: @escaping @Sendable (MachineEvent) -> Void) {
        self.onEvent = onEvent
        let callback: taskd_bus_callback = { context, event in
            let bus = Unmanaged<SystemBus>.fromOpaque(context!).takeUnretainedValue()
            switch Int(event) {
            case Int(TASKD_BUS_PREPARE_SLEEP.rawValue): bus.onEvent(.prepareForSleep)
            case Int(TASKD_BUS_RESUMED.rawValue): bus.onEvent(.resumed)
            default: bus.onEvent(.conditions)
            }
        }
        guard let opened = taskd_bus_open(callback, Unmanaged.passUnretained(self).toOpaque()) else { return nil }
        bus = opened
        fd = taskd_bus_fd(opened)
        timer = DeadlineTimer { [unowned self] in process() }
        token = EventLoop.shared.register(fd: fd, events: EventLoop.readable) { [unowned self] _ in process() }
        guard token != nil else {
            taskd_bus_close(opened)
            bus = nil
            return nil
        }
        EventLoop.shared.afterTurn { [self] in process() }  // the first requests go out
    }

    /// What the bus said last.
    package var state: SystemBusState {
        guard let bus else { return SystemBusState() }
        var raw = taskd_bus_state()
        taskd_bus_get_state(bus, &raw)
        var state = SystemBusState()
        state.logind = raw.logind != 0
        if state.logind {
            state.idle = raw.idle_hint != 0
            state.idleSinceMonotonic = raw.idle_since_monotonic
            if raw.inhibit_delay_max_usec > 0 { state.inhibitDelayMax = raw.inhibit_delay_max_usec }
        }
        state.holdsDelayInhibitor = raw.delay_inhibitor != 0
        state.holdsBlockInhibitor = raw.block_inhibitor != 0
        switch Int(raw.network_source) {
        case Int(TASKD_NETWORK_NM.rawValue):
            state.network = .networkManager(
                state: raw.nm_state, connectivity: raw.nm_connectivity, metered: raw.nm_metered)
        case Int(TASKD_NETWORK_NETWORKD.rawValue):
            state.network = .networkd(
                onlineState: Self.string(raw.networkd_online), operationalState: Self.string(raw.networkd_operational))
        default:
            state.network = NetworkState()
        }
        return state
    }

    /// Takes logind's sleep delay inhibitor (held until `releaseDelayInhibitor`, and taken again
    /// if logind restarts).
    package func takeDelayInhibitor() { call { taskd_bus_take_delay_inhibitor($0) } }

    /// Lets the system sleep.
    package func releaseDelayInhibitor() { call { taskd_bus_release_delay_inhibitor($0) } }

    /// Takes (`on`) or releases a sleep block inhibitor naming `why` (`Sleep=block` runs).
    package func blockSleep(_ on: Bool, why: String) { call { taskd_bus_block_sleep($0, on ? 1 : 0, why) } }

    private func call(_ body: (OpaquePointer) -> Void) {
        guard let bus else { return }
        body(bus)
        if !processing { process() }
    }

    /// Runs what is pending, then waits for what the connection waits for.
    private func process() {
        guard let bus, !processing else { return }
        processing = true
        let result = taskd_bus_process(bus)
        processing = false
        if result < 0 {
            close()  // the bus went away: conditions keep their last state
            return
        }
        if let token { EventLoop.shared.modify(fd: fd, token: token, events: UInt32(taskd_bus_events(bus))) }
        let timeout = taskd_bus_timeout(bus)
        timer?.arm(at: timeout == .max ? nil : timeout)
    }

    private func close() {
        if let token { EventLoop.shared.deregister(fd: fd, token: token) }
        token = nil
        timer?.arm(at: nil)
        if let bus { taskd_bus_close(bus) }
        bus = nil
    }

    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    deinit { close() }
}
