import TaskScheduling
import TaskdDaemon
import Testing

@testable import Taskd

@Suite("TaskDaemon: what an app declares in code")
struct TaskDaemonTests {
    @Test("every: alone first runs one interval after start; onStartup: overrides it; neither leaves no timer")
    func firstRunOfAnInterval() {
        let daemon = TaskDaemon(name: "app")
            .backgroundTask(.appRefresh("every"), every: .seconds(900)) { _ in }
            .backgroundTask(.appRefresh("atOnce"), onStartup: .zero, every: .seconds(60)) { _ in }
            .backgroundTask(.appRefresh("woken")) { _ in }
        let byName = Dictionary(uniqueKeysWithValues: daemon.registrations.map { ($0.definition.key.identifier, $0) })
        #expect(byName["every"]?.definition.onStartup == [.seconds(900)])
        #expect(byName["every"]?.definition.onUnitActive == [.seconds(900)])
        #expect(byName["atOnce"]?.definition.onStartup == [.zero])
        #expect(byName["woken"]?.definition.onStartup == [])
    }

    @Test("--version names the app and its version, then taskd's; taskd alone prints its own")
    func version() {
        #expect(TaskDaemon().versionLine == "taskd \(TaskdVersion.current)")
        #expect(
            TaskDaemon(name: "weatherd", version: "2.1").versionLine == "weatherd 2.1 (taskd \(TaskdVersion.current))")
        #expect(TaskDaemon(name: "weatherd").versionLine == "weatherd (taskd \(TaskdVersion.current))")
    }
}
