import Testing

@testable import TaskScheduling
@testable import TaskdConfig

/// Every key of the table, given a value, changes the definition: a key is its row and nothing
/// else, so a row that parses and then sets nothing, or sets the wrong field, fails here.
@Suite("Config: every task-file key is one row of the table, and it takes effect")
struct TaskFileKeysTests {
    /// One value per key, unlike its default. A key added to the table without one here fails `covered`.
    static let samples: [String: [String: String]] = [
        "Task": [
            "Description": "d", "Kind": "appRefresh", "Identifier": "other", "RuntimeBudgetSec": "7s",
            "CancelGraceSec": "3s", "Fleet": "max:2", "FleetUnavailable": "local", "Overlap": "queue",
            "ConcurrencyGroup": "db:2", "ResumeFrom": "start", "After": "extract",
            "QueueLimit": "3", "MaxInstances": "3", "MaxAttempts": "4",
            "RetryBackoffSec": "2s", "RetryBackoffMaxSec": "9s", "RetryJitter": "0.5", "RetryPreventExitStatus": "7",
            "History": "3", "ProgressTimeoutSec": "1min", "RequireACPower": "yes", "RequireBatteryNotLow": "yes",
            "MaxDeferSec": "1h", "ConditionLost": "continue", "WakeUsers": "0", "WakeGroups": "0",
            "RequireNetwork": "unmetered", "RequireIdleSec": "5min", "RequireFreeSpace": "/var 2G",
            "RequireCPUPressure": "50%", "RequireMemoryPressure": "10%/1min", "RequireIOPressure": "12.5%/10sec",
            "Sleep": "block", "ExpectSuccessWithinSec": "1d", "AlertAfterFailures": "3", "PauseAfterFailures": "5",
            "OnSuccess": "next", "OnFailure": "alert processing:page", "OnOverdue": "alert",
        ],
        "Timer": [
            "OnStartupSec": "1s", "OnUnitActiveSec": "1h", "OnUnitInactiveSec": "2h", "RandomizedDelaySec": "5s",
            "FixedRandomDelay": "yes", "Persistent": "yes", "OnCalendar": "daily", "CatchUp": "all",
            "CatchUpWindowSec": "1d",
        ],
        "Exec": [
            "ExecStart": "/bin/echo other", "Environment": "A=1", "WorkingDirectory": "/tmp", "KillSignal": "SIGINT",
            "User": "0", "Group": "0", "SupplementaryGroups": "0", "UMask": "0077", "Nice": "5",
            "LogRateLimitIntervalSec": "1s", "LogRateLimitBurst": "5", "MemoryMax": "64M", "MemoryHigh": "48M",
            "CPUQuota": "50%", "CPUWeight": "20", "IOWeight": "30", "TasksMax": "16",
        ],
    ]

    static let plain = "[Exec]\nExecStart=/bin/true\n"

    static func load(_ text: String) -> TaskDefinition? {
        ConfigLoader.parseTaskText(text, path: "/etc/taskd/tasks.d/t.task").0
    }

    @Test("every row of the table has a sample value here")
    func covered() {
        #expect(TaskFileKeys.table.sections == ["Task", "Timer", "Exec"])
        for (section, keys) in TaskFileKeys.table.keys {
            #expect(Set(keys) == Set(Self.samples[section]?.keys.map { $0 } ?? []), "[\(section)]")
        }
    }

    @Test("each key alone, on a plain command task, gives a definition unlike the plain one")
    func eachKeyTakesEffect() throws {
        let plain = try #require(Self.load(Self.plain))
        for (section, rows) in Self.samples {
            for (key, value) in rows {
                // ExecStart= is given once: its sample stands in the plain task's place.
                let text = (key == "ExecStart" ? "" : Self.plain) + "[\(section)]\n\(key)=\(value)\n"
                let (definition, diagnostics) = ConfigLoader.parseTaskText(text, path: "/etc/taskd/tasks.d/t.task")
                #expect(diagnostics.isEmpty, "\(key)=\(value): \(diagnostics)")
                #expect(definition != nil && definition != plain, "\(key)=\(value) changed nothing")
            }
        }
    }

    @Test("a file over a Swift task's code-given definition: a list key replaces the code's list, others keep it")
    func fileOverCode() throws {
        var code = TaskDefinition(key: TaskKey(kind: "appRefresh", identifier: "t"), handler: .swift)
        code.onStartup = [.seconds(5)]
        code.onUnitActive = [.seconds(60)]
        code.description = "from code"
        var diagnostics: [ConfigDiagnostic] = []
        let f = try ConfigFixture()
        try f.write("tasks.d/t.task", "[Timer]\nOnStartupSec=10s\nOnStartupSec=20s\n")
        _ = ConfigLoader.parseTaskFile(f.directory + "/tasks.d/t.task", &diagnostics)
        let config = ConfigLoader.load(directory: f.directory, swiftTasks: [code])
        #expect(config.diagnostics.isEmpty && diagnostics.isEmpty)
        let task = try #require(config.tasks.first)
        #expect(task.key == code.key && task.handler == .swift)
        #expect(task.onStartup == [.seconds(10), .seconds(20)], "the file's list replaces the code's")
        #expect(task.onUnitActive == [.seconds(60)] && task.description == "from code", "the rest is the code's")
        #expect(task.budget == code.budget, "the kind's default budget, as the code's")
    }

    @Test("the condition keys: what each value requires, and a clear error for a bad one")
    func conditions() throws {
        func conditions(_ lines: String) -> (Set<TaskCondition>?, [String]) {
            let (d, diagnostics) = ConfigLoader.parseTaskText(
                Self.plain + "[Task]\n" + lines, path: "/etc/taskd/tasks.d/t.task")
            return (d?.conditions, diagnostics.map(\.description))
        }
        #expect(conditions("RequireNetwork=yes\n").0 == [.networkOnline])
        #expect(conditions("RequireNetwork=unmetered\nRequireNetwork=online\n").0 == [.networkOnline])
        #expect(conditions("RequireNetwork=unmetered\n").0 == [.networkOnline, .networkUnmetered])
        #expect(conditions("RequireIdleSec=5min\nRequireIdleSec=0\n").0 == [])
        #expect(
            conditions("RequireFreeSpace=/var 1G\nRequireFreeSpace=/tmp 512M\n").0
                == [.freeSpace(path: "/var", bytes: 1 << 30), .freeSpace(path: "/tmp", bytes: 512 << 20)])
        #expect(conditions("RequireFreeSpace=/var 1G\nRequireFreeSpace=\n").0 == [])
        #expect(
            conditions("RequireMemoryPressure=12.5%/1min\n").0
                == [.pressure(.memory, permyriad: 1250, window: .oneMinute)])
        #expect(conditions("RequireIOPressure=20%\n").0 == [.pressure(.io, permyriad: 2000, window: .fiveMinutes)])
        for (line, message) in [
            ("RequireNetwork=wifi", "'wifi' is not a boolean, online or unmetered"),
            ("RequireFreeSpace=var 1G", "'var 1G' is not an absolute path and a size (/var 2G)"),
            ("RequireFreeSpace=/var lots", "'lots' is not a size (a number, with K, M, G or T)"),
            ("RequireCPUPressure=120%", "'120%' is not a percentage from 0% to 100%"),
            ("RequireCPUPressure=10%/2min", "'2min' is not 10sec, 1min or 5min"),
            ("RequireIdleSec=soon", "soon"),
        ] {
            let diagnostics = conditions(line + "\n").1
            #expect(
                diagnostics.count == 1 && diagnostics[0].contains("t.task:4") && diagnostics[0].contains(message),
                "\(line): \(diagnostics)")
        }
        #expect(
            TaskCondition.pressure(.memory, permyriad: 1250, window: .oneMinute).description
                == "memory-pressure=12.5%/1min")
        #expect(TaskCondition.freeSpace(path: "/var", bytes: 3 << 30).description == "free-space=/var:3G")
    }

    @Test("CatchUp= and Sleep= take their words; anything else names the choices")
    func catchUpAndSleep() {
        let (d, _) = ConfigLoader.parseTaskText(
            Self.plain + "[Timer]\nCatchUp=none\nCatchUpWindowSec=6h\n[Task]\nSleep=block\n", path: "/t.task")
        #expect(d?.catchUp == CatchUpPolicy.none && d?.catchUpWindow == .seconds(6 * 3600) && d?.sleep == .block)
        let (_, bad) = ConfigLoader.parseTaskText(Self.plain + "[Timer]\nCatchUp=some\n", path: "/t.task")
        #expect(bad.map(\.description).joined().contains("'some' is not none, latest or all"))
    }

    @Test("the resource keys, as systemd writes them, and the cgroup files they make")
    func resources() {
        let (d, _) = ConfigLoader.parseTaskText(
            "[Exec]\nExecStart=/bin/true\nMemoryMax=1G\nMemoryHigh=infinity\nCPUQuota=150%\nTasksMax=32\n",
            path: "/t.task")
        guard case .command(let spec)? = d?.handler else { return #expect(Bool(false)) }
        #expect(spec.limits.memoryMax == 1 << 30 && spec.limits.memoryHigh == nil && spec.limits.tasksMax == 32)
        #expect(
            spec.limits.files.map { "\($0.file)=\($0.value)" } == [
                "memory.max=1073741824", "cpu.max=150000 100000", "pids.max=32",
            ])
        let (_, bad) = ConfigLoader.parseTaskText("[Exec]\nExecStart=/bin/true\nCPUQuota=half\n", path: "/t.task")
        #expect(bad.map(\.description).joined().contains("'half' is not a percentage above 0%"))
    }
}
