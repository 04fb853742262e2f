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

    @Test("schedule: gives a task in code every timer a task file's [Timer] section can")
    func scheduleInCode() throws {
        let daemon = TaskDaemon(name: "app")
            .backgroundTask(
                .processing("report"),
                schedule: [
                    .calendar("Mon..Fri 09:00"), .calendar("Sat 12:00"), .randomizedDelay(.seconds(300), fixed: true),
                    .persistent, .afterRunEnds(.seconds(3600)),
                ]
            ) { _ in }
            .backgroundTask(.appRefresh("poll"), schedule: [.every(.seconds(60)), .afterStartup(.seconds(5))]) { _ in }
            .backgroundTask(.appRefresh("tick"), schedule: [.every(.seconds(30))]) { _ in }
        #expect(daemon.problems.isEmpty)
        let byName = Dictionary(uniqueKeysWithValues: daemon.registrations.map { ($0.definition.key.identifier, $0) })
        let report = try #require(byName["report"]?.definition)
        #expect(report.onCalendar.map(\.description) == ["Mon..Fri *-*-* 09:00:00", "Sat *-*-* 12:00:00"])
        #expect(report.randomizedDelay == .seconds(300) && report.fixedRandomDelay && report.persistent)
        #expect(report.onUnitInactive == [.seconds(3600)] && report.onStartup == [])
        #expect(byName["poll"]?.definition.onStartup == [.seconds(5)])
        #expect(byName["poll"]?.definition.onUnitActive == [.seconds(60)])
        #expect(byName["tick"]?.definition.onStartup == [.seconds(30)], "every alone: one interval after start")
    }

    @Test("a calendar in code that does not parse is a problem naming the task; the daemon refuses to start")
    func badCalendarInCode() async {
        let daemon = TaskDaemon(name: "app")
            .backgroundTask(.processing("report"), schedule: [.calendar("Mon..Fry 09:00")]) { _ in }
        #expect(daemon.problems.count == 1)
        #expect(daemon.problems.first?.hasPrefix("report: invalid calendar expression 'Mon..Fry 09:00'") == true)
        #expect(await daemon.run(arguments: ["--check-config", "--config", "/nonexistent"]) == 1)
    }

    @Test("a task registered again replaces its registration and problems, and takes its new place")
    func registeredAgain() {
        let base = TaskDaemon(name: "app")
            .backgroundTask(.processing("report"), schedule: [.calendar("Mon..Fry 09:00")]) { _ in }
            .backgroundTask(.appRefresh("feed")) { _ in }
        let fixed = base.backgroundTask(.processing("report"), schedule: [.calendar("Mon..Fri 09:00")]) { _ in }
        #expect(fixed.registrations.map(\.definition.key.identifier) == ["feed", "report"])
        #expect(fixed.registrations.last?.definition.onCalendar.count == 1)
        #expect(fixed.problems.isEmpty)
        // A builder is a value: the one it came from, and another made from it, are unchanged.
        let other = base.backgroundTask(.appRefresh("mail")) { _ in }
        #expect(base.registrations.map(\.definition.key.identifier) == ["report", "feed"])
        #expect(base.problems.count == 1)
        #expect(other.registrations.map(\.definition.key.identifier) == ["report", "feed", "mail"])
        #expect(other.problems.count == 1)
    }

    @Test("a builder of 50,000 registrations is made, read and freed")
    func manyRegistrations() {
        var daemon: TaskDaemon? = TaskDaemon(name: "app")
        for i in 0..<50_000 { daemon = daemon!.backgroundTask(.appRefresh("t\(i)")) { _ in } }
        #expect(daemon!.registrations.count == 50_000)
        daemon = nil
    }

    @Test("requires: sets the conditions, MaxDeferSec= and ConditionLost= a task file would")
    func requirements() {
        let daemon = TaskDaemon()
            .backgroundTask(
                .processing("backup"),
                requires: [.acPower, .batteryNotLow, .giveUpAfter(.seconds(3600)), .continueWhenLost]
            ) { _ in }
            .backgroundTask(.appRefresh("plain")) { _ in }
        let byName = Dictionary(uniqueKeysWithValues: daemon.registrations.map { ($0.definition.key.identifier, $0) })
        #expect(byName["backup"]?.definition.conditions == [.acPower, .batteryNotLow])
        #expect(byName["backup"]?.definition.maxDefer == .seconds(3600))
        #expect(byName["backup"]?.definition.conditionLost == .continue)
        #expect(byName["plain"]?.definition.conditions == [] && byName["plain"]?.definition.conditionLost == .cancel)
    }

    @Test("the machine's requirements, Sleep=block and the catch-up policy, as the task-file keys would set them")
    func machine() {
        let daemon = TaskDaemon()
            .backgroundTask(
                .processing("sync"),
                schedule: [.calendar("hourly"), .persistent, .catchUp(.all, within: .seconds(6 * 3600))],
                requires: [
                    .unmeteredNetwork, .idle(for: .seconds(300)), .freeSpace(atLeast: 1 << 30, in: "/var"),
                    .pressure(.memory, atMost: 12.5, over: .oneMinute), .keepsSystemAwake,
                ]
            ) { _ in }
        let d = daemon.registrations[0].definition
        #expect(
            d.conditions == [
                .networkOnline, .networkUnmetered, .idle(.seconds(300)), .freeSpace(path: "/var", bytes: 1 << 30),
                .pressure(.memory, permyriad: 1250, window: .oneMinute),
            ])
        #expect(d.sleep == .block && d.persistent && d.catchUp == .all && d.catchUpWindow == .seconds(6 * 3600))
    }

    @Test("alerts: sets what ExpectSuccessWithinSec=, AlertAfterFailures=, PauseAfterFailures= and On…= would")
    func alerts() {
        let daemon = TaskDaemon()
            .backgroundTask(
                .processing("backup"),
                alerts: [
                    .expectSuccess(within: .seconds(86_400)), .alertAfterFailures(2), .pauseAfterFailures(5),
                    .onFailure(wake: "page", "processing:log"), .onSuccess(wake: "report"), .onOverdue(wake: "page"),
                ]
            ) { _ in }
        let d = daemon.registrations[0].definition
        #expect(d.expectSuccessWithin == .seconds(86_400) && d.alertAfterFailures == 2 && d.pauseAfterFailures == 5)
        #expect(d.onFailure == ["page", "processing:log"] && d.onSuccess == ["report"] && d.onOverdue == ["page"])
    }
}
