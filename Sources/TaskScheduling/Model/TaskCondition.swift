/// Something the machine must be for a task's run to start (the `Require…=` keys, Swift
/// `requires:`): a run triggered while one does not hold waits for it.
public enum TaskCondition: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// On AC power (or no power supply reports otherwise: a desktop, a server, a VM).
    case acPower
    /// No battery, or every battery above 15 % or charging.
    case batteryNotLow
    /// The network is online: NetworkManager's connectivity is full, or systemd-networkd's
    /// online state is `online`.
    case networkOnline
    /// The network in use is not metered (NetworkManager's `Metered`; networkd has no notion, so
    /// under it the network never counts as metered).
    case networkUnmetered
    /// The system has been idle (logind's `IdleHint`) for at least this long.
    case idle(TimeSpan)
    /// At least `bytes` are free to unprivileged users in the file system that holds `path`.
    case freeSpace(path: String, bytes: UInt64)
    /// The kernel's pressure stall average for `resource` is at most `permyriad` / 100 %.
    case pressure(PressureResource, permyriad: Int, window: PressureWindow)

    /// The condition as one word, journaled in `TASK_WAITING_FOR` and `TASKD_CONDITIONS`:
    /// `ac-power`, `idle=5min`, `free-space=/var:1G`, `memory-pressure=10%/1min`.
    public var description: String {
        switch self {
        case .acPower: return "ac-power"
        case .batteryNotLow: return "battery-not-low"
        case .networkOnline: return "network-online"
        case .networkUnmetered: return "network-unmetered"
        case .idle(let span): return "idle=\(span)"
        case .freeSpace(let path, let bytes): return "free-space=\(path):\(Self.size(bytes))"
        case .pressure(let resource, let permyriad, let window):
            return "\(resource.rawValue)-pressure=\(Self.percent(permyriad))/\(window.rawValue)"
        }
    }

    /// How `taskctl status` says what a run waits for: `on AC power`.
    public var waitingText: String {
        switch self {
        case .acPower: return "on AC power"
        case .batteryNotLow: return "battery not low"
        case .networkOnline: return "network online"
        case .networkUnmetered: return "network not metered"
        case .idle(let span): return "idle for \(span)"
        case .freeSpace(let path, let bytes): return "\(Self.size(bytes)) free in \(path)"
        case .pressure(let resource, let permyriad, let window):
            return "\(resource.rawValue) pressure at most \(Self.percent(permyriad)) (\(window.rawValue) average)"
        }
    }

    /// Whether the condition can only be known by looking (free space, pressure): no event says
    /// when it changes, so the daemon samples it while a run needs it.
    public var isSampled: Bool {
        switch self {
        case .freeSpace, .pressure: return true
        default: return false
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.description < b.description }

    /// `12`, `12.5`, `12.25` (a percentage as `RequireMemoryPressure=` and /proc/pressure write
    /// it, at most two decimals) as hundredths of a percent.
    public static func permyriad(_ text: Substring) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !parts[0].isEmpty, let whole = Int(parts[0]), whole >= 0 else { return nil }
        var fraction = 0
        if parts.count == 2 {
            guard (1...2).contains(parts[1].count), let f = Int(parts[1]), f >= 0 else { return nil }
            fraction = parts[1].count == 1 ? f * 10 : f
        }
        return whole * 100 + fraction
    }

    /// `1G`, `512M`, `100K` or a number of bytes: the largest unit that divides exactly.
    static func size(_ bytes: UInt64) -> String {
        for (suffix, unit) in [("T", UInt64(1) << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)]
        where bytes >= unit && bytes % unit == 0 {
            return "\(bytes / unit)\(suffix)"
        }
        return "\(bytes)"
    }

    /// `10%`, `12.5%`.
    static func percent(_ permyriad: Int) -> String {
        let fraction = permyriad % 100
        guard fraction != 0 else { return "\(permyriad / 100)%" }
        let digits = fraction % 10 == 0 ? "\(fraction / 10)" : (fraction < 10 ? "0\(fraction)" : "\(fraction)")
        return "\(permyriad / 100).\(digits)%"
    }
}

/// A resource the kernel reports stall pressure for (`/proc/pressure/…`), as systemd's
/// `ConditionCPUPressure=`, `ConditionMemoryPressure=` and `ConditionIOPressure=`.
public enum PressureResource: String, Hashable, Sendable, CaseIterable {
    case cpu
    case memory
    case io
}

/// The averaging window of a pressure condition: the three the kernel reports (`avg10`,
/// `avg60`, `avg300`), written as systemd writes them.
public enum PressureWindow: String, Hashable, Sendable, CaseIterable {
    case tenSeconds = "10sec"
    case oneMinute = "1min"
    case fiveMinutes = "5min"

    /// The field of a `/proc/pressure` line that holds this average.
    public var field: String {
        switch self {
        case .tenSeconds: return "avg10"
        case .oneMinute: return "avg60"
        case .fiveMinutes: return "avg300"
        }
    }
}

extension TaskCondition: Codable {
    private enum CodingKeys: String, CodingKey { case kind, usec, path, bytes, resource, permyriad, window }

    /// `{"kind":"ac-power"}`, `{"kind":"idle","usec":N}`, `{"kind":"free-space","path":…,"bytes":N}`,
    /// `{"kind":"pressure","resource":"memory","permyriad":N,"window":"1min"}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .acPower, .batteryNotLow, .networkOnline, .networkUnmetered: try c.encode(description, forKey: .kind)
        case .idle(let span):
            try c.encode("idle", forKey: .kind)
            try c.encode(span.microseconds, forKey: .usec)
        case .freeSpace(let path, let bytes):
            try c.encode("free-space", forKey: .kind)
            try c.encode(path, forKey: .path)
            try c.encode(bytes, forKey: .bytes)
        case .pressure(let resource, let permyriad, let window):
            try c.encode("pressure", forKey: .kind)
            try c.encode(resource.rawValue, forKey: .resource)
            try c.encode(permyriad, forKey: .permyriad)
            try c.encode(window.rawValue, forKey: .window)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try c.decode(String.self, forKey: .kind)
        switch kind {
        case "ac-power": self = .acPower
        case "battery-not-low": self = .batteryNotLow
        case "network-online": self = .networkOnline
        case "network-unmetered": self = .networkUnmetered
        case "idle": self = .idle(TimeSpan(microseconds: try c.decode(UInt64.self, forKey: .usec)))
        case "free-space":
            self = .freeSpace(
                path: try c.decode(String.self, forKey: .path), bytes: try c.decode(UInt64.self, forKey: .bytes))
        case "pressure":
            guard let resource = PressureResource(rawValue: try c.decode(String.self, forKey: .resource)),
                let window = PressureWindow(rawValue: try c.decode(String.self, forKey: .window))
            else { throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "unknown pressure") }
            self = .pressure(resource, permyriad: try c.decode(Int.self, forKey: .permyriad), window: window)
        default:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "unknown condition \(kind)")
        }
    }
}
