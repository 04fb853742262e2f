import Foundation
import Testing

@testable import TaskdMachine

/// The power supplies read from a sysfs-shaped folder, as /sys/class/power_supply lays them out.
@Suite("PowerState: AC power and battery from the power supply folder")
struct PowerStateTests {
    /// A folder with `supplies`: name → (file → contents).
    func folder(_ supplies: [String: [String: String]]) throws -> String {
        let root = NSTemporaryDirectory() + "taskd-power-\(UUID().uuidString)"
        for (name, files) in supplies {
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            for (file, text) in files {
                try (text + "\n").write(toFile: root + "/" + name + "/" + file, atomically: true, encoding: .utf8)
            }
        }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return root
    }

    @Test("a laptop: plugged in, on battery, low, low but charging; a mouse's battery does not count")
    func laptop() throws {
        func state(online: String, capacity: String, status: String) throws -> PowerState {
            PowerState.read(
                try folder([
                    "AC": ["type": "Mains", "online": online],
                    "BAT0": ["type": "Battery", "capacity": capacity, "status": status],
                    "hidpp_battery_0": [
                        "type": "Battery", "scope": "Device", "capacity": "3", "status": "Discharging",
                    ],
                ]))
        }
        #expect(
            try state(online: "1", capacity: "80", status: "Charging")
                == PowerState(onACPower: true, batteryNotLow: true))
        #expect(
            try state(online: "0", capacity: "80", status: "Discharging")
                == PowerState(onACPower: false, batteryNotLow: true))
        #expect(
            try state(online: "0", capacity: "9", status: "Discharging")
                == PowerState(onACPower: false, batteryNotLow: false))
        #expect(
            try state(online: "1", capacity: "9", status: "Charging")
                == PowerState(onACPower: true, batteryNotLow: true))
    }

    @Test("a server or VM with no supplies, or no folder at all, is on AC power with no battery to be low")
    func noSupplies() throws {
        #expect(PowerState.read(try folder([:])) == PowerState(onACPower: true, batteryNotLow: true))
        #expect(PowerState.read("/nonexistent/power_supply") == PowerState(onACPower: true, batteryNotLow: true))
        // A battery alone, with no mains supply listed, is not AC power unless it charges.
        let alone = try folder(["BAT1": ["type": "Battery", "capacity": "50", "status": "Discharging"]])
        #expect(PowerState.read(alone).onACPower == false)
    }
}
