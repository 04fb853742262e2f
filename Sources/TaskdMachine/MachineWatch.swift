import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// What the machine is, for the conditions tasks require and for system sleep: the power supplies,
/// the system bus (logind's idle state and sleep, the network), free space and pressure. It calls
/// `onEvent` on the event loop when a condition may have changed or the system sleeps or resumes;
/// `unheld(_:)` then says which conditions do not hold. Use it from the event loop only:
/// Unchecked for sendability as the owner of the `SystemBus` (see there), whose callbacks reach it on
/// the loop; the daemon's `MachineLink` component is its one caller.
package final class MachineWatch: MachinePort, @unchecked Sendable {
    /// How often free space and pressure are read while a run needs them: no event tells of them.
    static let sampleInterval: UInt64 = 5_000_000

    private(set) var power: PowerSupplyMonitor?
    private(set) var bus: SystemBus?
    private var busTried = false
    private var idleTimer: DeadlineTimer?
    private var sampleTimer: DeadlineTimer?
    private var sampling = false
    private let onEvent: @Sendable (MachineEvent) -> Void
    /// `/proc/pressure`, or `TASKD_PRESSURE_DIR` in tests.
    let pressureFolder = getenv("TASKD_PRESSURE_DIR").map { String(cString: $0) } ?? "/proc/pressure"

    package init(onEvent: @escaping @Sendable (MachineEvent) -> Void) {
        self.onEvent = onEvent
    }

    /// Starts watching what `conditions` need (once each): the power supplies for power and
    /// battery, the system bus for the network and idleness.
    package func watch(for conditions: Set<TaskCondition>) {
        for condition in conditions {
            switch condition {
            case .acPower, .batteryNotLow:
                if power == nil { power = PowerSupplyMonitor { [onEvent] _ in onEvent(.conditions) } }
            case .networkOnline, .networkUnmetered, .idle:
                openBus()
            case .freeSpace, .pressure:
                continue
            }
        }
    }

    /// Connects to the system bus (once); false if there is none.
    @discardableResult
    func openBus() -> Bool {
        if !busTried {
            busTried = true
            bus = SystemBus(onEvent: onEvent)
        }
        return bus != nil
    }

    /// Where conditions are learnt from, for the journal: the power supplies' folder, if watched.
    package var sourceNote: String {
        guard let power else { return "" }
        return " (power supplies in \(power.folder)" + (power.isWatching ? ")" : "; no events from them, read once)")
    }

    /// Takes or releases a logind inhibitor lock; the system bus is opened for the first one.
    package func inhibit(_ lock: SleepInhibitor, hold: Bool) {
        switch (lock, hold) {
        case (.delay, true): if openBus() { bus?.takeDelayInhibitor() }
        case (.delay, false): bus?.releaseDelayInhibitor()
        case (.block, _):
            if hold { openBus() }
            bus?.blockSleep(hold, why: "a taskd run with Sleep=block is in progress")
        }
    }

    /// logind's `InhibitDelayMaxUSec` (5 s when it is not known).
    package var inhibitDelayMax: UInt64 { bus?.state.inhibitDelayMax ?? 5_000_000 }

    /// Whether free space and pressure are being read every `sampleInterval`.
    package var isSampling: Bool { sampling }

    /// Reads free space and pressure every `sampleInterval` while `on` (a run needs them).
    package func sample(_ on: Bool) {
        guard on != sampling else { return }
        sampling = on
        if on && sampleTimer == nil {
            sampleTimer = DeadlineTimer { [weak self] in
                guard let self, self.sampling else { return }
                self.sampleTimer?.arm(at: DeadlineTimer.now() + Self.sampleInterval)
                self.onEvent(.conditions)
            }
        }
        sampleTimer?.arm(at: on ? DeadlineTimer.now() + Self.sampleInterval : nil)
    }

    /// The conditions among `conditions` that do not hold now. Arms a timer for the moment the
    /// system will have been idle long enough for an idle condition.
    package func unheld(_ conditions: Set<TaskCondition>) -> Set<TaskCondition> {
        let power = power?.state
        let busState = bus?.state
        let now = DeadlineTimer.now()
        var idleDue: UInt64?
        var unheld: Set<TaskCondition> = []
        for condition in conditions {
            let holds: Bool
            switch condition {
            case .acPower: holds = power?.onACPower ?? true
            case .batteryNotLow: holds = power?.batteryNotLow ?? true
            case .networkOnline: holds = busState?.network.online ?? true
            case .networkUnmetered: holds = !(busState?.network.metered ?? false)
            case .idle(let span):
                guard let busState, busState.logind else {
                    holds = true  // no logind: no sessions to be busy
                    break
                }
                let due = busState.idleSinceMonotonic &+ span.microseconds
                holds = busState.idle && due <= now
                if busState.idle && !holds { idleDue = min(idleDue ?? due, due) }
            case .freeSpace(let path, let bytes): holds = (Self.freeBytes(path) ?? 0) >= bytes
            case .pressure(let resource, let permyriad, let window):
                holds = (pressure(resource, window) ?? 0) <= permyriad
            }
            if !holds { unheld.insert(condition) }
        }
        if let idleDue {
            if idleTimer == nil { idleTimer = DeadlineTimer { [onEvent] in onEvent(.conditions) } }
            idleTimer?.arm(at: idleDue)
        }
        return unheld
    }

    /// What the machine is, in words, for the journal: `on AC power; network online (NetworkManager); idle`.
    package var summary: String {
        var parts: [String] = []
        if let state = power?.state {
            parts.append(
                (state.onACPower ? "on AC power" : "on battery") + (state.batteryNotLow ? "" : ", battery low"))
        }
        if let state = bus?.state {
            parts.append("network \(state.network)")
            if state.logind { parts.append(state.idle ? "idle" : "in use") }
        }
        return parts.isEmpty ? "nothing watched" : parts.joined(separator: "; ")
    }

    /// Bytes free to unprivileged users in the file system of `path`; nil if it cannot be read.
    static func freeBytes(_ path: String) -> UInt64? {
        var st = statvfs()
        guard statvfs(path, &st) == 0 else { return nil }
        return UInt64(st.f_bavail) &* UInt64(st.f_frsize)
    }

    /// The average of `/proc/pressure/RESOURCE` over `window`, in hundredths of a percent, as
    /// systemd's `Condition…Pressure=` reads it: the "full" line (time all tasks stalled) for
    /// memory and IO, the "some" line for CPU (whose "full" the kernel keeps at 0); nil without
    /// pressure accounting (the condition then holds, as systemd's does).
    func pressure(_ resource: PressureResource, _ window: PressureWindow) -> Int? {
        guard case .success(let bytes) = FileIO.read(pressureFolder + "/" + resource.rawValue) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        if resource != .cpu, let full = Self.parsePressure(text, window: window, line: "full") { return full }
        return Self.parsePressure(text, window: window, line: "some")
    }

    /// `some avg10=1.23 avg60=0.50 avg300=0.10 total=…` → 123 for `10sec`, from the `line` line.
    static func parsePressure(_ text: String, window: PressureWindow, line name: String = "some") -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + " ") }) else { return nil }
        let field = line.split(separator: " ").first { $0.hasPrefix(window.field + "=") }
        return field.flatMap { TaskCondition.permyriad($0.dropFirst(window.field.count + 1)) }
    }
}
