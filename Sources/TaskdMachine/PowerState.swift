import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// What the power supplies say, read from a sysfs-shaped folder (`/sys/class/power_supply`: one
/// folder per supply with `type`, `online`, `capacity`, `status`).
package struct PowerState: Hashable, Sendable {
    /// A mains supply is online; or there is none and no battery either (a desktop, a server, a
    /// VM), as systemd's `ConditionACPower=` reads it; or a battery says it is charging.
    package var onACPower: Bool
    /// No battery, or every battery above `lowPercent` or charging.
    package var batteryNotLow: Bool

    /// Below this a battery is low (Android's threshold for `setRequiresBatteryNotLow`).
    package static let lowPercent = 15

    /// Reads `folder`; a folder that cannot be read reads as mains power and no battery.
    package static func read(_ folder: String) -> PowerState {
        var mains = 0
        var mainsOnline = false
        var batteries = 0
        var charging = false
        var low = false
        for name in supplies(folder) {
            let supply = folder + "/" + name
            func value(_ file: String) -> String? {
                guard case .success(let bytes) = FileIO.read(supply + "/" + file) else { return nil }
                return String(decoding: bytes, as: UTF8.self).trimmed
            }
            switch value("type") {
            case "Mains", "USB", "USB_C", "USB_PD":
                mains += 1
                if value("online") == "1" { mainsOnline = true }
            case "Battery":
                // A peripheral's battery (a mouse) says scope=Device: not the machine's.
                guard value("scope") != "Device" else { continue }
                batteries += 1
                let status = value("status")
                if status == "Charging" || status == "Full" { charging = true }
                if let capacity = value("capacity").flatMap({ Int($0) }), capacity < lowPercent,
                    status != "Charging"
                {
                    low = true
                }
            default:
                continue
            }
        }
        let ac = mainsOnline || (mains == 0 && (batteries == 0 || charging))
        return PowerState(onACPower: ac, batteryNotLow: !low)
    }
}

/// The names in `folder` (sysfs's supplies are symlinks to folders), without `.` and `..`.
func supplies(_ folder: String) -> [String] {
    guard let dir = opendir(folder) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}

extension String {
    fileprivate var trimmed: String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
