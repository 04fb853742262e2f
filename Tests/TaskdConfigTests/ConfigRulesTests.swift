import Foundation
import Testing

@testable import TaskScheduling
@testable import TaskdConfig

/// Rules that look past one key: a key that needs another, a value every task of a group must
/// share, wakes between tasks that would go round for ever. Each is said at its file:line.
@Suite("Config: rules across keys and tasks")
struct ConfigRulesTests {
    @Test("Fleet=once needs OnCalendar=: said at the Fleet= line, the task left out; max:N needs none")
    func fleetOnceNeedsACalendar() throws {
        let f = try ConfigFixture()
        try f.write("taskd.conf", "[Daemon]\nFleetEndpoints=127.0.0.1:2379\n")
        let path = try f.write(
            "tasks.d/t.task", "[Task]\nFleet=once\n[Timer]\nOnStartupSec=1min\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/m.task", "[Task]\nFleet=max:3\nFleetUnavailable=local\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/c.task", "[Task]\nFleet=once\n[Timer]\nOnCalendar=hourly\n[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(
            config.diagnostics.map(\.description) == [
                "\(path):2: error: Fleet=: once needs OnCalendar=: the fleet shares calendar slots, which every host names alike"
            ])
        #expect(config.tasks.map(\.key.identifier) == ["c", "m"])
        #expect(config.tasks.map(\.fleet) == [.once, .max(3)])
        #expect(config.tasks.map(\.fleetUnavailable) == [.skip, .local])
    }

    @Test(
        "ConcurrencyGroup=: every task of a group gives its size; another size is said at its line, the task left out")
    func concurrencyGroupSizes() throws {
        let f = try ConfigFixture()
        let first = try f.write("tasks.d/a.task", "[Task]\nConcurrencyGroup=db:2\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/b.task", "[Task]\nConcurrencyGroup=db:2\n[Exec]\nExecStart=/bin/true\n")
        let other = try f.write(
            "tasks.d/c.task", "[Task]\nDescription=x\nConcurrencyGroup=db\n[Exec]\nExecStart=/bin/true\n")
        let bad = try f.write("tasks.d/d.task", "[Task]\nConcurrencyGroup=db:0\n[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(
            config.diagnostics.map(\.description) == [
                "\(other):3: error: ConcurrencyGroup=: group db has size 2 (\(first):2); every task of a group gives the same size",
                "\(bad):2: error: ConcurrencyGroup=: 'db:0' is not NAME or NAME:SIZE (letters, digits, '.', '_', '-'; SIZE from 1 to 1000)",
            ])
        #expect(config.tasks.map(\.key.identifier) == ["a", "b"])
        #expect(
            config.tasks.map(\.concurrencyGroup) == [ConcurrencyGroup("db", size: 2), ConcurrencyGroup("db", size: 2)])
    }

    @Test("a cycle of OnSuccess=/OnFailure= wakes is refused at the line of the task that closes it; the rest load")
    func chainCycles() throws {
        let f = try ConfigFixture()
        try f.write("tasks.d/a.task", "[Task]\nOnSuccess=b\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/b.task", "[Task]\nOnFailure=alert\nOnSuccess=processing:c\n[Exec]\nExecStart=/bin/true\n")
        let c = try f.write("tasks.d/c.task", "[Task]\nDescription=c\nOnSuccess=a\n[Exec]\nExecStart=/bin/true\n")
        let me = try f.write("tasks.d/me.task", "[Task]\nOnFailure=me\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/alert.task", "[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(
            config.diagnostics.map(\.description) == [
                "\(c):3: error: OnSuccess=: c closes a cycle of OnSuccess=/OnFailure= wakes (a → b → c → a): it would run for ever",
                "\(me):2: error: OnFailure=: me closes a cycle of OnSuccess=/OnFailure= wakes (me → me): it would run for ever",
            ])
        #expect(config.tasks.map(\.key.identifier) == ["a", "alert", "b"])
    }

    @Test("a cycle of After= is refused at the After= line of the task that closes it; the rest load")
    func afterCycles() throws {
        let f = try ConfigFixture()
        try f.write("tasks.d/extract.task", "[Task]\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/load.task", "[Task]\nAfter=transform\n[Exec]\nExecStart=/bin/true\n")
        let transform = try f.write(
            "tasks.d/transform.task", "[Task]\nDescription=t\nAfter=extract load\n[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(
            config.diagnostics.map(\.description) == [
                "\(transform):3: error: After=: transform closes a cycle of After= (load after transform after load): "
                    + "its runs would wait for each other for ever"
            ])
        #expect(config.tasks.map(\.key.identifier) == ["extract", "load"])
        #expect(config.tasks.first { $0.key.identifier == "load" }?.after == ["transform"])
    }

    @Test("a fleet task with no FleetEndpoints=: a warning at its Fleet= line, the task loaded")
    func fleetWithoutEndpoints() throws {
        let f = try ConfigFixture()
        let path = try f.write("tasks.d/m.task", "[Task]\nFleet=max:2\n[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(
            config.diagnostics.map(\.description) == [
                "\(path):2: warning: Fleet=: no FleetEndpoints= in taskd.conf's [Daemon]: the task runs on this host as Fleet=host would"
            ])
        #expect(config.tasks.map(\.fleet) == [.max(2)])
    }
}
