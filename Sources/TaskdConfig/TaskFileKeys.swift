import TaskScheduling

private typealias Value = UnitFileValues

/// The table of `[Section] Key=` a task file accepts, each with the parser that applies it
/// (systemd's conf-parser shape: one row per key, every diagnostic carries file:line and the key).
enum TaskFileKeys {
    typealias Apply = UnitFileTable<TaskFile>.Apply

    static let table = UnitFileTable<TaskFile>([
        "Task": [
            "Description": { f, e in f.definition.description = e.value },
            "Kind": { f, e throws(ConfigDiagnostic) in f.kind = try Value.word(e) },
            "Identifier": { f, e throws(ConfigDiagnostic) in f.identifier = try Value.word(e) },
            "RuntimeBudgetSec": { f, e throws(ConfigDiagnostic) in
                let span = try Value.timeSpan(e)
                guard span.microseconds > 0, !span.isInfinite else {
                    throw ConfigDiagnostic(e.location, key: e.key, "the budget must be finite and above 0")
                }
                f.budget = span
            },
            "CancelGraceSec": { f, e throws(ConfigDiagnostic) in f.definition.cancelGrace = try Value.finiteSpan(e) },
            "Overlap": { f, e throws(ConfigDiagnostic) in
                f.definition.overlap = try Value.choice(e, "coalesce, queue, replace, skip or allow")
            },
            "Fleet": { f, e throws(ConfigDiagnostic) in
                guard let mode = FleetMode(parsing: e.value) else {
                    throw ConfigDiagnostic(
                        e.location, key: e.key, "'\(e.value)' is not host, once or max:N (N from 1 to 1000)")
                }
                f.definition.fleet = mode
                f.fleetLocation = e.location
            },
            "ConcurrencyGroup": { f, e throws(ConfigDiagnostic) in
                guard let group = ConcurrencyGroup(parsing: e.value) else {
                    throw ConfigDiagnostic(
                        e.location, key: e.key,
                        "'\(e.value)' is not NAME or NAME:SIZE (letters, digits, '.', '_', '-'; SIZE from 1 to 1000)")
                }
                f.definition.concurrencyGroup = group
                f.groupLocation = e.location
            },
            "ResumeFrom": { f, e throws(ConfigDiagnostic) in
                f.definition.resumeFrom = try Value.choice(e, "checkpoint or start")
            },
            "FleetUnavailable": { f, e throws(ConfigDiagnostic) in
                f.definition.fleetUnavailable = try Value.choice(e, "skip, local or wait")
            },
            "MaxInstances": { f, e throws(ConfigDiagnostic) in
                f.definition.maxInstances = try Value.integer(e, in: 1...10_000)
            },
            "QueueLimit": { f, e throws(ConfigDiagnostic) in
                f.definition.queueLimit = try Value.integer(e, in: 0...10_000)
            },
            "MaxAttempts": { f, e throws(ConfigDiagnostic) in
                f.definition.retry.maxAttempts = try Value.integer(e, in: 1...1000)
            },
            "RetryBackoffSec": { f, e throws(ConfigDiagnostic) in
                f.definition.retry.backoff = try Value.finiteSpan(e)
            },
            "RetryBackoffMaxSec": { f, e throws(ConfigDiagnostic) in
                f.definition.retry.backoffMax = try Value.finiteSpan(e)
            },
            "RetryJitter": { f, e throws(ConfigDiagnostic) in
                guard let value = Double(e.value), value >= 0, value <= 1 else {
                    throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not a fraction from 0 to 1")
                }
                f.definition.retry.jitter = value
            },
            "RetryPreventExitStatus": { f, e throws(ConfigDiagnostic) in
                try f.append(\.retry.preventExitStatus, e) { e throws(ConfigDiagnostic) in
                    try e.value.split(separator: " ").map { word throws(ConfigDiagnostic) in
                        guard let status = Int32(word), (0...255).contains(status) else {
                            throw ConfigDiagnostic(e.location, key: e.key, "'\(word)' is not an exit status (0 to 255)")
                        }
                        return status
                    }
                }
            },
            "ProgressTimeoutSec": { f, e throws(ConfigDiagnostic) in
                f.definition.progressTimeout = try Value.finiteSpan(e)
            },
            "RequireACPower": { f, e throws(ConfigDiagnostic) in try require(.acPower, &f, e) },
            "RequireBatteryNotLow": { f, e throws(ConfigDiagnostic) in try require(.batteryNotLow, &f, e) },
            "RequireNetwork": { f, e throws(ConfigDiagnostic) in
                f.definition.conditions.subtract([.networkOnline, .networkUnmetered])
                switch e.value {
                case "unmetered": f.definition.conditions.formUnion([.networkOnline, .networkUnmetered])
                case "online": f.definition.conditions.insert(.networkOnline)
                default:
                    if try Value.boolean(e, choices: "a boolean, online or unmetered") {
                        f.definition.conditions.insert(.networkOnline)
                    }
                }
            },
            "RequireIdleSec": { f, e throws(ConfigDiagnostic) in
                f.definition.conditions = f.definition.conditions.filter { if case .idle = $0 { false } else { true } }
                let span = e.value.isEmpty ? .zero : try Value.finiteSpan(e)
                if span.microseconds > 0 { f.definition.conditions.insert(.idle(span)) }
            },
            "RequireFreeSpace": { f, e throws(ConfigDiagnostic) in
                if e.value.isEmpty || !f.listsStarted.contains(e.key) {
                    f.definition.conditions = f.definition.conditions.filter {
                        if case .freeSpace = $0 { false } else { true }
                    }
                }
                f.listsStarted.insert(e.key)
                if !e.value.isEmpty { f.definition.conditions.insert(try freeSpace(e)) }
            },
            "RequireCPUPressure": { f, e throws(ConfigDiagnostic) in try requirePressure(.cpu, &f, e) },
            "RequireMemoryPressure": { f, e throws(ConfigDiagnostic) in try requirePressure(.memory, &f, e) },
            "RequireIOPressure": { f, e throws(ConfigDiagnostic) in try requirePressure(.io, &f, e) },
            "MaxDeferSec": { f, e throws(ConfigDiagnostic) in f.definition.maxDefer = try Value.finiteSpan(e) },
            "ConditionLost": { f, e throws(ConfigDiagnostic) in
                f.definition.conditionLost = try Value.choice(e, "cancel or continue")
            },
            "Sleep": { f, e throws(ConfigDiagnostic) in f.definition.sleep = try Value.choice(e, "cancel or block") },
            "History": { f, e throws(ConfigDiagnostic) in
                f.definition.historySize = try Value.integer(e, in: 0...10_000)
            },
            "ExpectSuccessWithinSec": { f, e throws(ConfigDiagnostic) in
                f.definition.expectSuccessWithin = try Value.finiteSpan(e)
            },
            "AlertAfterFailures": { f, e throws(ConfigDiagnostic) in
                f.definition.alertAfterFailures = try Value.integer(e, in: 0...10_000)
            },
            "PauseAfterFailures": { f, e throws(ConfigDiagnostic) in
                f.definition.pauseAfterFailures = try Value.integer(e, in: 0...10_000)
            },
            "OnSuccess": { f, e throws(ConfigDiagnostic) in
                try f.append(\.onSuccess, e, targets)
                if f.chainLocation == nil { (f.chainLocation, f.chainKey) = (e.location, e.key) }
            },
            "OnFailure": { f, e throws(ConfigDiagnostic) in
                try f.append(\.onFailure, e, targets)
                if f.chainLocation == nil { (f.chainLocation, f.chainKey) = (e.location, e.key) }
            },
            "OnOverdue": { f, e throws(ConfigDiagnostic) in try f.append(\.onOverdue, e, targets) },
            "After": { f, e throws(ConfigDiagnostic) in
                try f.append(\.after, e, targets)
                if f.afterLocation == nil { f.afterLocation = e.location }
            },
            "WakeUsers": { f, e throws(ConfigDiagnostic) in try f.append(\.wakeUsers, e, users) },
            "WakeGroups": { f, e throws(ConfigDiagnostic) in try f.append(\.wakeGroups, e, groups) },
        ],
        "Timer": [
            "OnStartupSec": { f, e throws(ConfigDiagnostic) in try f.append(\.onStartup, e, spans) },
            "OnUnitActiveSec": { f, e throws(ConfigDiagnostic) in
                try f.append(\.onUnitActive, e, spans)
                f.relativeTimerLocation = f.relativeTimerLocation ?? e.location
            },
            "OnUnitInactiveSec": { f, e throws(ConfigDiagnostic) in
                try f.append(\.onUnitInactive, e, spans)
                f.relativeTimerLocation = f.relativeTimerLocation ?? e.location
            },
            "RandomizedDelaySec": { f, e throws(ConfigDiagnostic) in
                f.definition.randomizedDelay = try Value.finiteSpan(e)
            },
            "FixedRandomDelay": { f, e throws(ConfigDiagnostic) in
                f.definition.fixedRandomDelay = try Value.boolean(e)
            },
            "Persistent": { f, e throws(ConfigDiagnostic) in f.definition.persistent = try Value.boolean(e) },
            "CatchUp": { f, e throws(ConfigDiagnostic) in
                f.definition.catchUp = try Value.choice(e, "none, latest or all")
            },
            "CatchUpWindowSec": { f, e throws(ConfigDiagnostic) in
                f.definition.catchUpWindow = try Value.finiteSpan(e)
            },
            "OnCalendar": { f, e throws(ConfigDiagnostic) in
                try f.append(\.definition.onCalendar, e) { e throws(ConfigDiagnostic) in
                    do throws(CalendarError) {
                        return [try CalendarSpec(parsing: e.value)]
                    } catch {
                        throw ConfigDiagnostic(e.location, key: e.key, error.description)
                    }
                }
            },
        ],
        "Exec": [
            "ExecStart": { f, e throws(ConfigDiagnostic) in
                if e.value.isEmpty {
                    f.command.argv = []
                    f.execStartLocation = nil
                    return
                }
                if !f.command.argv.isEmpty {
                    throw ConfigDiagnostic(
                        e.location, key: e.key, "given twice (an empty ExecStart= first resets it)")
                }
                let argv = try Value.words(e)
                let program = argv[0]
                if let prefix = program.first, "@-:+!|".contains(prefix) {
                    throw ConfigDiagnostic(e.location, key: e.key, "the '\(prefix)' prefix is not supported")
                }
                if program.utf8.contains(UInt8(ascii: "/")) && !program.hasPrefix("/") {
                    throw ConfigDiagnostic(
                        e.location, key: e.key, "'\(program)' must be an absolute path or a bare program name")
                }
                f.command.argv = argv
                f.execStartLocation = e.location
            },
            "Environment": { f, e throws(ConfigDiagnostic) in
                try f.append(\.environment, e) { e throws(ConfigDiagnostic) in
                    let assignments = try Value.words(e)
                    for assignment in assignments {
                        guard let eq = assignment.firstIndex(of: "="), isEnvironmentName(assignment[..<eq]) else {
                            throw ConfigDiagnostic(e.location, key: e.key, "'\(assignment)' is not NAME=value")
                        }
                    }
                    return assignments
                }
            },
            "WorkingDirectory": { f, e throws(ConfigDiagnostic) in
                f.command.workingDirectory = try Value.absolutePath(e)
            },
            "KillSignal": { f, e throws(ConfigDiagnostic) in
                guard let n = SignalNames.number(e.value) else {
                    throw ConfigDiagnostic(e.location, key: e.key, "unknown signal '\(e.value)'")
                }
                f.command.killSignal = n
            },
            "User": { f, e throws(ConfigDiagnostic) in
                f.user = try Identities.one(e, "user", Identities.user)
                f.userLocation = e.location
            },
            "Group": { f, e throws(ConfigDiagnostic) in f.group = try Identities.one(e, "group", Identities.groupID) },
            "SupplementaryGroups": { f, e throws(ConfigDiagnostic) in
                f.supplementaryGroups = try Identities.append(f.supplementaryGroups, e, groups: true)
            },
            "UMask": { f, e throws(ConfigDiagnostic) in
                guard e.value.count <= 4, let mask = UInt32(e.value, radix: 8), mask <= 0o777 else {
                    throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not an octal mode (0000 to 0777)")
                }
                f.command.identity.umask = mask
            },
            "Nice": { f, e throws(ConfigDiagnostic) in
                guard let nice = Int32(e.value), (-20...19).contains(nice) else {
                    throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not a nice level from -20 to 19")
                }
                f.command.identity.nice = nice
            },
            "LogRateLimitIntervalSec": { f, e throws(ConfigDiagnostic) in
                f.command.outputLimit.interval = try Value.finiteSpan(e)
            },
            "LogRateLimitBurst": { f, e throws(ConfigDiagnostic) in
                f.command.outputLimit.burst = try Value.integer(e, in: 0...1_000_000)
            },
            "MemoryMax": { f, e throws(ConfigDiagnostic) in f.command.limits.memoryMax = try limitSize(e) },
            "MemoryHigh": { f, e throws(ConfigDiagnostic) in f.command.limits.memoryHigh = try limitSize(e) },
            "CPUQuota": { f, e throws(ConfigDiagnostic) in
                guard e.value.hasSuffix("%"), let percent = Int(e.value.dropLast()), percent > 0 else {
                    throw ConfigDiagnostic(
                        e.location, key: e.key, "'\(e.value)' is not a percentage above 0% (200% is two CPUs)")
                }
                f.command.limits.cpuQuotaPercent = percent
            },
            "CPUWeight": { f, e throws(ConfigDiagnostic) in
                f.command.limits.cpuWeight = try Value.integer(e, in: 1...10_000)
            },
            "IOWeight": { f, e throws(ConfigDiagnostic) in
                f.command.limits.ioWeight = try Value.integer(e, in: 1...10_000)
            },
            "TasksMax": { f, e throws(ConfigDiagnostic) in
                if e.value == "infinity" { return f.command.limits.tasksMax = nil }
                f.command.limits.tasksMax = UInt64(try Value.integer(e, in: 1...4_194_304))
            },
        ],
    ])

    /// A boolean `Require…=` key: the condition is the task's, or not.
    static func require(_ condition: TaskCondition, _ f: inout TaskFile, _ e: UnitFileEntry) throws(ConfigDiagnostic) {
        if try Value.boolean(e) {
            f.definition.conditions.insert(condition)
        } else {
            f.definition.conditions.remove(condition)
        }
    }

    /// `RequireCPUPressure=10%/1min`: at most this share of stalled time in the kernel's average
    /// over 10sec, 1min or 5min (5min if not given), as systemd's `ConditionMemoryPressure=`;
    /// empty removes it.
    static func requirePressure(_ resource: PressureResource, _ f: inout TaskFile, _ e: UnitFileEntry)
        throws(ConfigDiagnostic)
    {
        f.definition.conditions = f.definition.conditions.filter {
            if case .pressure(resource, _, _) = $0 { false } else { true }
        }
        guard !e.value.isEmpty else { return }
        let parts = e.value.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts[0].hasSuffix("%"), let permyriad = TaskCondition.permyriad(parts[0].dropLast()), permyriad <= 10_000
        else {
            throw ConfigDiagnostic(e.location, key: e.key, "'\(parts[0])' is not a percentage from 0% to 100%")
        }
        var window = PressureWindow.fiveMinutes
        if parts.count == 2 {
            guard let w = PressureWindow(rawValue: parts[1]) else {
                throw ConfigDiagnostic(e.location, key: e.key, "'\(parts[1])' is not 10sec, 1min or 5min")
            }
            window = w
        }
        f.definition.conditions.insert(.pressure(resource, permyriad: permyriad, window: window))
    }

    /// `RequireFreeSpace=/var/cache 2G`: an absolute path and a size (bytes, or K, M, G, T: powers of 1024).
    static func freeSpace(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> TaskCondition {
        let words = e.value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard words.count == 2, words[0].hasPrefix("/") else {
            throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not an absolute path and a size (/var 2G)")
        }
        guard let bytes = size(words[1]) else {
            throw ConfigDiagnostic(e.location, key: e.key, "'\(words[1])' is not a size (a number, with K, M, G or T)")
        }
        return .freeSpace(path: words[0], bytes: bytes)
    }

    /// `MemoryMax=`/`MemoryHigh=`: a size (K, M, G, T), or `infinity` for none.
    static func limitSize(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> UInt64? {
        if e.value == "infinity" { return nil }
        guard let bytes = size(e.value), bytes > 0 else {
            throw ConfigDiagnostic(
                e.location, key: e.key, "'\(e.value)' is not a size (a number, with K, M, G or T) or infinity")
        }
        return bytes
    }

    /// A size as systemd writes one: a number of bytes, or with K, M, G, T (1024-based), an optional B.
    static func size(_ text: String) -> UInt64? {
        var digits = Substring(text)
        if digits.hasSuffix("B") { digits = digits.dropLast() }
        var unit: UInt64 = 1
        if let last = digits.last, let shift = ["K": 10, "M": 20, "G": 30, "T": 40][String(last)] {
            unit = 1 << UInt64(shift)
            digits = digits.dropLast()
        }
        guard let value = UInt64(digits) else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : bytes
    }

    /// `OnFailure=backup-alert other`: targets (a name, a kind, or kind:identifier), space-separated.
    static func targets(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> [String] {
        let words = e.value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        for word in words
        where !word.split(separator: ":", omittingEmptySubsequences: false).allSatisfy({ Value.isWord(String($0)) }) {
            throw ConfigDiagnostic(e.location, key: e.key, "'\(word)' is not a task name, kind or kind:identifier")
        }
        return words
    }

    /// A time span as a one-element list, for `TaskFile.append`.
    static func spans(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> [TimeSpan] { [try Value.timeSpan(e)] }

    /// `WakeUsers=`'s users, for `TaskFile.append`.
    static func users(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> [UInt32] {
        try Identities.append(nil, e, groups: false)
    }

    /// `WakeGroups=`'s groups, for `TaskFile.append`.
    static func groups(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> [UInt32] {
        try Identities.append(nil, e, groups: true)
    }

    /// A name `Environment=` may set: letters, digits and `_`, not starting with a digit.
    static func isEnvironmentName(_ s: Substring) -> Bool {
        guard let first = s.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return s.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
        }
    }
}
