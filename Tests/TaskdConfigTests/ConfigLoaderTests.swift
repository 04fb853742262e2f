import Foundation
import Testing

@testable import TaskScheduling
@testable import TaskdConfig

@Suite("Config: task files in unit-file syntax")
struct ConfigLoaderTests {
    @Test("a full task file loads every key")
    func fullFile() throws {
        let f = try ConfigFixture()
        try f.write(
            "tasks.d/weather.task",
            """
            # comment
            ; another comment
            [Task]
            Description=Refresh the weather cache
            Kind=appRefresh
            RuntimeBudgetSec=1min 30s
            CancelGraceSec=2500ms
            Overlap=queue
            QueueLimit=3
            MaxAttempts=4
            RetryBackoffSec=500ms
            RetryBackoffMaxSec=1min
            RetryJitter=0.25
            RetryPreventExitStatus=100 65
            RetryPreventExitStatus=78
            History=50

            [Timer]
            OnStartupSec=10s
            OnUnitActiveSec=15min
            OnUnitActiveSec=1h
            OnCalendar=Mon..Fri 9:00
            OnCalendar=*:0/15
            OnUnitInactiveSec=2h
            RandomizedDelaySec=30s
            FixedRandomDelay=yes

            [Exec]
            ExecStart=/usr/local/bin/refresh "--city" 'New York' a\\tb \\
                      --verbose
            Environment=CITY=Paris "GREETING=hello world"
            Environment=LEVEL=3
            WorkingDirectory=/var/lib/weather
            KillSignal=SIGINT
            X-Custom=ignored
            """)
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.diagnostics.isEmpty)
        let task = try #require(config.tasks.first)
        #expect(task.key == TaskKey(kind: "appRefresh", identifier: "weather"))
        #expect(task.description == "Refresh the weather cache")
        #expect(task.budget == .seconds(90))
        #expect(task.cancelGrace == .milliseconds(2500))
        #expect(task.onStartup == [.seconds(10)])
        #expect(task.onUnitActive == [.seconds(900), .seconds(3600)])
        #expect(task.onCalendar.map(\.description) == ["Mon..Fri *-*-* 09:00:00", "*-*-* *:00/15:00"])
        #expect(task.onUnitInactive == [.seconds(7200)])
        #expect(task.randomizedDelay == .seconds(30) && task.fixedRandomDelay)
        guard case .command(let spec) = task.handler else { return #expect(Bool(false)) }
        #expect(spec.argv == ["/usr/local/bin/refresh", "--city", "New York", "a\tb", "--verbose"])
        #expect(spec.environment == ["CITY=Paris", "GREETING=hello world", "LEVEL=3"])
        #expect(spec.workingDirectory == "/var/lib/weather")
        #expect(spec.killSignal == 2)
        #expect(task.overlap == .queue && task.queueLimit == 3 && task.historySize == 50)
        #expect(task.retry.maxAttempts == 4 && task.retry.jitter == 0.25)
        #expect(task.retry.backoff == .milliseconds(500) && task.retry.backoffMax == .seconds(60))
        #expect(task.retry.preventExitStatus == [100, 65, 78])
    }

    @Test("AllowUsers=, AllowGroups=, WakeUsers=, WakeGroups= resolve names and numbers; an empty value resets")
    func accessKeys() throws {
        let f = try ConfigFixture()
        try f.write("taskd.conf", "[Daemon]\nAllowUsers=root 1234\nAllowGroups=root\nAllowGroups=\nAllowGroups=77\n")
        try f.write("tasks.d/t.task", "[Task]\nWakeUsers=nobody\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/open.task", "[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.diagnostics.isEmpty)
        #expect(config.daemon.access == AccessList(users: [0, 1234], groups: [77]))
        let byName = Dictionary(uniqueKeysWithValues: config.tasks.map { ($0.key.identifier, $0) })
        #expect(byName["t"]?.wakeAccess == AccessList(users: [65534], groups: []))
        #expect(byName["open"]?.wakeAccess == nil)
    }

    @Test("User= sets uid, gid, home, shell and the user's groups plus SupplementaryGroups=; Group= overrides the gid")
    func execIdentity() throws {
        let f = try ConfigFixture()
        try f.write(
            "tasks.d/asnobody.task",
            "[Exec]\nExecStart=/bin/true\nUser=nobody\nSupplementaryGroups=adm\nUMask=027\nNice=-5\n")
        try f.write("tasks.d/grouped.task", "[Exec]\nExecStart=/bin/true\nUser=daemon\nGroup=adm\n")
        try f.write("tasks.d/numeric.task", "[Exec]\nExecStart=/bin/true\nUser=4000000000\nGroup=4000000001\n")
        try f.write("tasks.d/groupsonly.task", "[Exec]\nExecStart=/bin/true\nSupplementaryGroups=adm 5\n")
        try f.write(
            "tasks.d/plain.task", "[Exec]\nExecStart=/bin/true\nLogRateLimitIntervalSec=1min\nLogRateLimitBurst=0\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.diagnostics.isEmpty)
        let specs = Dictionary(
            uniqueKeysWithValues: config.tasks.compactMap { t -> (String, CommandSpec)? in
                guard case .command(let spec) = t.handler else { return nil }
                return (t.key.identifier, spec)
            })
        let nobody = try #require(specs["asnobody"]?.identity)
        #expect(nobody.uid == 65534 && nobody.gid == 65534 && nobody.userName == "nobody")
        #expect(nobody.home == "/nonexistent" && nobody.shell == "/usr/sbin/nologin")
        #expect(nobody.groups == [65534, 4])  // nobody's own groups (nogroup), then adm
        #expect(nobody.umask == 0o027 && nobody.nice == -5)
        let daemon = try #require(specs["grouped"]?.identity)
        #expect(daemon.uid == 1 && daemon.gid == 4 && daemon.groups?.first == 4)
        let numeric = try #require(specs["numeric"]?.identity)
        #expect(numeric.uid == 4_000_000_000 && numeric.gid == 4_000_000_001 && numeric.home == nil)
        let groupsOnly = try #require(specs["groupsonly"]?.identity)
        #expect(groupsOnly.uid == nil && groupsOnly.gid == nil && groupsOnly.groups == [4, 5])
        let plain = try #require(specs["plain"])
        #expect(plain.identity.isInherited && plain.identity == ExecIdentity())
        #expect(plain.outputLimit == OutputRateLimit(interval: .seconds(60), burst: 0) && plain.outputLimit.isOff)
        #expect(specs["asnobody"]?.outputLimit == .standard)
    }

    @Test("run-policy defaults: coalesce, one attempt, exit status 100 prevents retries, 20 runs of history")
    func policyDefaults() throws {
        let f = try ConfigFixture()
        try f.write("tasks.d/t.task", "[Exec]\nExecStart=/bin/true\n")
        try f.write("taskd.conf", "[Daemon]\nMaxConcurrentRuns=3\n")
        let config = ConfigLoader.load(directory: f.directory)
        let task = try #require(config.tasks.first)
        #expect(task.overlap == .coalesce && task.queueLimit == 8 && task.historySize == 20)
        #expect(task.retry == RetryPolicy())
        #expect(task.retry.maxAttempts == 1 && task.retry.preventExitStatus == [100])
        #expect(config.daemon.maxConcurrentRuns == 3)
    }

    @Test("defaults: identifier from the file name, kind processing, budget by kind, grace 5 s, SIGTERM")
    func defaults() throws {
        let f = try ConfigFixture()
        try f.write("tasks.d/backup.task", "[Exec]\nExecStart=tar czf /tmp/x.tgz /etc\n")
        try f.write("tasks.d/refresh.task", "[Task]\nKind=appRefresh\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/other.task", "[Task]\nKind=maintenance\nIdentifier=renamed\n[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.diagnostics.isEmpty)
        let byName = Dictionary(uniqueKeysWithValues: config.tasks.map { ($0.key.identifier, $0) })
        #expect(byName["backup"]?.key.kind == "processing")
        #expect(byName["backup"]?.budget == .seconds(600))
        #expect(byName["backup"]?.cancelGrace == .seconds(5))
        #expect(byName["refresh"]?.budget == .seconds(30))
        #expect(byName["renamed"]?.budget == .seconds(60))
        guard case .command(let spec)? = byName["backup"]?.handler else { return #expect(Bool(false)) }
        #expect(spec.killSignal == 15)
    }

    @Test("drop-ins apply in name order after the file; an empty assignment resets a list")
    func dropIns() throws {
        let f = try ConfigFixture()
        try f.write(
            "tasks.d/t.task",
            "[Timer]\nOnStartupSec=1s\nOnUnitActiveSec=1min\nOnUnitActiveSec=2min\n[Exec]\nExecStart=/bin/true\n")
        try f.write("tasks.d/t.task.d/20-later.conf", "[Task]\nRuntimeBudgetSec=20s\n")
        try f.write(
            "tasks.d/t.task.d/10-first.conf",
            "[Task]\nRuntimeBudgetSec=10s\n[Timer]\nOnUnitActiveSec=\nOnUnitActiveSec=5min\n")
        try f.write("tasks.d/t.task.d/30-reset.conf", "[Exec]\nExecStart=\nExecStart=/bin/echo hi\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.diagnostics.isEmpty)
        let task = try #require(config.tasks.first)
        #expect(task.budget == .seconds(20))
        #expect(task.onUnitActive == [.seconds(300)])
        #expect(task.handler == .command(CommandSpec(argv: ["/bin/echo", "hi"])))
    }

    /// (file text, line, key, part of the message): every error path of the task file parser.
    static let errors: [(String, Int, String?, String)] = [
        ("[Task]\ngarbage\n[Exec]\nExecStart=/bin/true", 2, nil, "missing '='"),
        ("Kind=appRefresh\n[Exec]\nExecStart=/bin/true", 1, "Kind", "outside of any [Section]"),
        ("[Task\n[Exec]\nExecStart=/bin/true", 1, nil, "invalid section header"),
        ("[Exec]\nExecStart=/bin/true\n[Service]\nType=oneshot", 4, "Type", "unknown section [Service]"),
        ("[Task]\nRuntimeBudget=5s\n[Exec]\nExecStart=/bin/true", 2, "RuntimeBudget", "unknown key in section [Task]"),
        ("[Task]\nRuntimeBudgetSec=5x\n[Exec]\nExecStart=/bin/true", 2, "RuntimeBudgetSec", "invalid time span '5x'"),
        ("[Task]\nRuntimeBudgetSec=0\n[Exec]\nExecStart=/bin/true", 2, "RuntimeBudgetSec", "finite and above 0"),
        ("[Task]\nRuntimeBudgetSec=infinity\n[Exec]\nExecStart=/bin/true", 2, "RuntimeBudgetSec", "finite and above 0"),
        ("[Task]\nCancelGraceSec=infinity\n[Exec]\nExecStart=/bin/true", 2, "CancelGraceSec", "must be finite"),
        ("[Task]\nKind=app refresh\n[Exec]\nExecStart=/bin/true", 2, "Kind", "must be letters"),
        ("[Task]\nIdentifier=a:b\n[Exec]\nExecStart=/bin/true", 2, "Identifier", "must be letters"),
        ("[Timer]\nOnStartupSec=soon\n[Exec]\nExecStart=/bin/true", 2, "OnStartupSec", "invalid time span"),
        ("[Timer]\nOnUnitActiveSec=-5s\n[Exec]\nExecStart=/bin/true", 2, "OnUnitActiveSec", "negative"),
        ("[Timer]\nOnCalendar=*-*-* 25:00\n[Exec]\nExecStart=/bin/true", 2, "OnCalendar", "hour 25 is out of range"),
        ("[Timer]\nOnCalendar=Mon..Fri 9\n[Exec]\nExecStart=/bin/true", 2, "OnCalendar", "invalid calendar expression"),
        ("[Timer]\nFixedRandomDelay=maybe\n[Exec]\nExecStart=/bin/true", 2, "FixedRandomDelay", "not a boolean"),
        (
            "[Timer]\nRandomizedDelaySec=infinity\n[Exec]\nExecStart=/bin/true", 2, "RandomizedDelaySec",
            "must be finite"
        ),
        (
            "[Task]\nOverlap=sometimes\n[Exec]\nExecStart=/bin/true", 2, "Overlap",
            "not coalesce, queue, replace, skip or allow"
        ),
        ("[Task]\nMaxAttempts=0\n[Exec]\nExecStart=/bin/true", 2, "MaxAttempts", "whole number from 1 to 1000"),
        ("[Task]\nQueueLimit=lots\n[Exec]\nExecStart=/bin/true", 2, "QueueLimit", "whole number from 0"),
        ("[Task]\nRetryJitter=1.5\n[Exec]\nExecStart=/bin/true", 2, "RetryJitter", "fraction from 0 to 1"),
        ("[Task]\nRetryBackoffSec=infinity\n[Exec]\nExecStart=/bin/true", 2, "RetryBackoffSec", "must be finite"),
        ("[Task]\nRetryPreventExitStatus=1 300\n[Exec]\nExecStart=/bin/true", 2, "RetryPreventExitStatus", "'300'"),
        ("[Task]\nHistory=-1\n[Exec]\nExecStart=/bin/true", 2, "History", "whole number"),
        (
            "[Task]\nWakeUsers=root no-such-user\n[Exec]\nExecStart=/bin/true", 2, "WakeUsers",
            "no such user 'no-such-user'"
        ),
        ("[Task]\nWakeGroups=no-such-group\n[Exec]\nExecStart=/bin/true", 2, "WakeGroups", "no such group"),
        ("[Exec]\nExecStart=/bin/echo 'unterminated", 2, "ExecStart", "unterminated ' quote"),
        ("[Exec]\nExecStart=bin/refresh", 2, "ExecStart", "absolute path or a bare program name"),
        ("[Exec]\nExecStart=-/bin/true", 2, "ExecStart", "'-' prefix is not supported"),
        ("[Exec]\nExecStart=/bin/true\nExecStart=/bin/false", 3, "ExecStart", "given twice"),
        ("[Exec]\nExecStart=/bin/echo \\q", 2, "ExecStart", "unknown escape"),
        ("[Exec]\nExecStart=/bin/true\nEnvironment=JUSTANAME", 3, "Environment", "is not NAME=value"),
        ("[Exec]\nExecStart=/bin/true\nEnvironment=1X=2", 3, "Environment", "is not NAME=value"),
        ("[Exec]\nExecStart=/bin/true\nWorkingDirectory=relative/dir", 3, "WorkingDirectory", "not an absolute path"),
        ("[Exec]\nExecStart=/bin/true\nKillSignal=SIGFOO", 3, "KillSignal", "unknown signal"),
        ("[Task]\nDescription=no command", 1, "ExecStart", "no Swift handler is registered"),
        ("[Exec]\nExecStart=/bin/true\nUser=no-such-user", 3, "User", "no such user 'no-such-user'"),
        ("[Exec]\nExecStart=/bin/true\nGroup=no-such-group", 3, "Group", "no such group 'no-such-group'"),
        ("[Exec]\nExecStart=/bin/true\nSupplementaryGroups=adm nope", 3, "SupplementaryGroups", "no such group 'nope'"),
        ("[Exec]\nExecStart=/bin/true\nUser=4000000000", 3, "User", "has no passwd entry, so it has no group"),
        ("[Exec]\nExecStart=/bin/true\nUMask=0999", 3, "UMask", "not an octal mode"),
        ("[Exec]\nExecStart=/bin/true\nUMask=01777", 3, "UMask", "not an octal mode"),
        ("[Exec]\nExecStart=/bin/true\nNice=20", 3, "Nice", "from -20 to 19"),
        ("[Exec]\nExecStart=/bin/true\nLogRateLimitBurst=lots", 3, "LogRateLimitBurst", "whole number"),
        ("[Exec]\nExecStart=/bin/true\nLogRateLimitIntervalSec=infinity", 3, "LogRateLimitIntervalSec", "finite"),
    ]

    @Test("each error names file:line and the key; the broken task is left out, the others load", arguments: errors)
    func errorPaths(text: String, line: Int, key: String?, message: String) throws {
        let f = try ConfigFixture()
        let path = try f.write("tasks.d/broken.task", text)
        try f.write("tasks.d/good.task", "[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(!config.isValid)
        let d = try #require(config.diagnostics.first)
        #expect(config.diagnostics.count == 1, "\(config.diagnostics)")
        #expect(d.location == SourceLocation(file: path, line: line))
        #expect(d.key == key)
        #expect(d.message.contains(message), "\(d.message)")
        #expect(d.description.hasPrefix("\(path):\(line): error: "))
        #expect(config.tasks.map(\.key.identifier) == ["good"])
    }

    @Test("tasks with the same settings share one copy of them; a task that differs has its own")
    func sharedSettings() throws {
        let f = try ConfigFixture()
        let same = "[Task]\nRuntimeBudgetSec=90s\n[Timer]\nOnCalendar=hourly\n[Exec]\nExecStart=/usr/bin/env true\n"
        try f.write("tasks.d/a.task", same)
        try f.write("tasks.d/b.task", same)
        try f.write("tasks.d/c.task", same.replacingOccurrences(of: "90s", with: "80s"))
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.diagnostics.isEmpty)
        let (a, b, c) = (config.tasks[0], config.tasks[1], config.tasks[2])
        #expect(a.budget == .seconds(90) && c.budget == .seconds(80))
        #expect(a.$options.isIdentical(to: b.$options) && !a.$options.isIdentical(to: c.$options))
        #expect(
            a.onCalendar.withUnsafeBufferPointer(\.baseAddress) == c.onCalendar.withUnsafeBufferPointer(\.baseAddress))
        guard case .command(let commandA) = a.handler, case .command(let commandC) = c.handler else {
            return #expect(Bool(false))
        }
        #expect(commandA.$options.isIdentical(to: commandC.$options))
    }

    @Test("two files defining the same kind:identifier: the second is an error")
    func duplicate() throws {
        let f = try ConfigFixture()
        try f.write("tasks.d/a.task", "[Task]\nIdentifier=same\n[Exec]\nExecStart=/bin/true\n")
        let second = try f.write("tasks.d/b.task", "[Task]\nIdentifier=same\n[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.diagnostics.map(\.location) == [SourceLocation(file: second, line: 1)])
        #expect(config.diagnostics.first?.message.contains("already defined by") == true)
        #expect(config.tasks.count == 1)
    }

    @Test("taskd.conf: [Daemon] keys, and its errors with file:line")
    func daemonFile() throws {
        let f = try ConfigFixture()
        let path = try f.write(
            "taskd.conf",
            "[Daemon]\nStateDirectory=/var/lib/x\nSocket=relative.sock\nFoo=1\n[Other]\nA=b\n[Daemon]\nMaxConcurrentRuns=0\n"
        )
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.daemon.stateDirectory == "/var/lib/x")
        #expect(config.daemon.socketPath == nil)
        #expect(config.diagnostics.map(\.location.line) == [3, 4, 6, 8])
        #expect(config.diagnostics.last?.message.contains("'0' is not a whole number from 1") == true)
        #expect(config.diagnostics.allSatisfy { $0.location.file == path })
    }

    @Test("taskd.conf: the connection limits, and their errors with file:line")
    func connectionLimits() throws {
        let f = try ConfigFixture()
        try f.write(
            "taskd.conf",
            "[Daemon]\nMaxConnections=300\nMaxConnectionsPerUser=20\nIdleTimeoutSec=2min\nRequestTimeoutSec=500ms\n"
                + "MaxConnections=0\nIdleTimeoutSec=infinity\nRequestTimeoutSec=soon\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.daemon.maxConnections == 300)
        #expect(config.daemon.maxConnectionsPerUser == 20)
        #expect(config.daemon.idleTimeout == .seconds(120))
        #expect(config.daemon.requestTimeout == .milliseconds(500))
        #expect(config.diagnostics.map(\.location.line) == [6, 7, 8])
        #expect(config.diagnostics.map(\.key) == ["MaxConnections", "IdleTimeoutSec", "RequestTimeoutSec"])
    }

    @Test("taskd.conf: SyncIntervalSec= takes a time span, 0 and infinity included; an error names file:line")
    func syncInterval() throws {
        for (value, expected) in [("0", TimeSpan.zero), ("250ms", .milliseconds(250)), ("infinity", .infinity)] {
            let f = try ConfigFixture()
            try f.write("taskd.conf", "[Daemon]\nSyncIntervalSec=\(value)\n")
            let config = ConfigLoader.load(directory: f.directory)
            #expect(config.daemon.syncInterval == expected)
            #expect(config.diagnostics.isEmpty)
        }
        let f = try ConfigFixture()
        try f.write("taskd.conf", "[Daemon]\n\nSyncIntervalSec=often\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.daemon.syncInterval == nil)
        #expect(config.diagnostics.map(\.location.line) == [3])
        #expect(config.diagnostics.first?.message.contains("'often' is not a time span") == true)
        #expect(config.diagnostics.first?.key == "SyncIntervalSec")
    }

    @Test("a file without ExecStart= configures the Swift handler of that identifier")
    func swiftHandlerConfigured() throws {
        let f = try ConfigFixture()
        try f.write("tasks.d/WEATHER_DATA.task", "[Task]\nRuntimeBudgetSec=12s\n[Timer]\nOnStartupSec=1s\n")
        let code = TaskDefinition(
            key: TaskKey(kind: "appRefresh", identifier: "WEATHER_DATA"), description: "from code",
            onUnitActive: [.seconds(900)], handler: .swift)
        let config = ConfigLoader.load(directory: f.directory, swiftTasks: [code])
        #expect(config.diagnostics.isEmpty)
        let task = try #require(config.tasks.first)
        #expect(task.key.kind == "appRefresh")
        #expect(task.budget == .seconds(12))
        #expect(task.description == "from code")
        #expect(task.onStartup == [.seconds(1)])
        #expect(task.onUnitActive == [.seconds(900)])
        #expect(task.handler == .swift)
    }
}

@Suite("Config: word splitting as systemd's extract_first_word")
struct WordSplitterTests {
    @Test(arguments: [
        ("a b  c", ["a", "b", "c"]), ("'a b' \"c d\"", ["a b", "c d"]), ("x\\ y", ["x y"]), ("a\\nb", ["a\nb"]),
        ("\"it's\"", ["it's"]), ("pre'fix'post", ["prefixpost"]), ("\\x41", ["A"]), ("''", [""]), ("", []),
    ])
    func split(input: String, expected: [String]) throws {
        #expect(try WordSplitter.split(input) == expected)
    }

    @Test(arguments: ["'open", "\"open", "trailing\\", "\\xZZ"])
    func rejects(input: String) {
        #expect(throws: WordSplitError.self) { try WordSplitter.split(input) }
    }
}

extension ConfigLoaderTests {
    @Test("a configuration folder that does not exist: an error when named on the command line, else a warning")
    func missingDirectory() throws {
        let missing = NSTemporaryDirectory() + "taskd-missing-\(UUID().uuidString)"
        let named = ConfigLoader.load(directory: missing, required: true)
        #expect(!named.isValid)
        #expect(named.diagnostics.map(\.description) == ["\(missing):0: error: no such directory"])
        let byDefault = ConfigLoader.load(directory: missing)
        #expect(byDefault.isValid && byDefault.tasks.isEmpty)
        #expect(byDefault.diagnostics.map(\.severity) == [.warning])
        let f = try ConfigFixture()
        let file = try f.write("plain", "")
        #expect(ConfigLoader.load(directory: file, required: true).diagnostics.map(\.message) == ["not a directory"])
        #expect(ConfigLoader.load(directory: f.directory, required: true).diagnostics.isEmpty)
    }

    @Test("OnUnitActiveSec= or OnUnitInactiveSec= with no first trigger: a warning at its line, the task still loads")
    func relativeTimerAlone() throws {
        let f = try ConfigFixture()
        try f.write(
            "tasks.d/alone.task",
            "[Task]\nKind=k\n[Timer]\nOnUnitInactiveSec=5min\nOnUnitActiveSec=1h\n[Exec]\nExecStart=/bin/true\n")
        try f.write(
            "tasks.d/started.task", "[Timer]\nOnStartupSec=1min\nOnUnitActiveSec=1h\n[Exec]\nExecStart=/bin/true\n")
        try f.write(
            "tasks.d/calendar.task", "[Timer]\nOnCalendar=daily\nOnUnitActiveSec=1h\n[Exec]\nExecStart=/bin/true\n")
        let config = ConfigLoader.load(directory: f.directory)
        #expect(config.isValid)
        #expect(config.tasks.map(\.key.identifier).sorted() == ["alone", "calendar", "started"])
        let warning = try #require(config.diagnostics.first)
        #expect(config.diagnostics.count == 1 && warning.severity == .warning)
        #expect(warning.location == SourceLocation(file: f.directory + "/tasks.d/alone.task", line: 4))
        #expect(warning.description.contains("add OnStartupSec= for a first run"))
    }
}
