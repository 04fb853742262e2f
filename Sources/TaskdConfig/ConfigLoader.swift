import TaskScheduling

/// Loads `taskd.conf` and `tasks.d/*.task` (with `NAME.task.d/*.conf` drop-ins) from a directory.
public enum ConfigLoader {
    /// Loads `directory`; `swiftTasks` are the tasks registered in code, which a file may configure
    /// (a file without `ExecStart=` names a Swift handler) and which are kept as given otherwise.
    public static func load(directory: String, swiftTasks: [TaskDefinition] = [], required: Bool = false)
        -> LoadedConfig
    {
        var diagnostics: [ConfigDiagnostic] = []
        if !TextFiles.isDirectory(directory) {
            // A folder named on the command line must exist; the default one may not (an app's tasks
            // can all be in code).
            let what = TextFiles.exists(directory) ? "not a directory" : "no such directory"
            diagnostics.append(
                ConfigDiagnostic(
                    SourceLocation(file: directory, line: 0),
                    required ? what : "\(what); only the tasks registered in code are loaded",
                    severity: required ? .error : .warning))
        }
        let daemon = loadDaemon(directory + "/taskd.conf", &diagnostics)
        let tasksDirectory = directory + "/tasks.d"
        var definitions: [TaskKey: TaskDefinition] = [:]
        for task in swiftTasks { definitions[task.key] = task }
        var fromFiles: [TaskKey: String] = [:]
        let swiftByName = Dictionary(grouping: swiftTasks, by: \.key.identifier)
        var shared = SharedValues()
        for name in TextFiles.list(tasksDirectory, suffix: ".task") ?? [] {
            let path = tasksDirectory + "/" + name
            guard let file = parseTaskFile(path, &diagnostics) else { continue }
            let probe = file.definition(base: nil)
            let base = swiftByName[probe.key.identifier]?.first { file.kind == nil || $0.key.kind == probe.key.kind }
            let definition = file.definition(base: base)
            let at = SourceLocation(file: path, line: 1)
            if let other = fromFiles[definition.key] {
                diagnostics.append(ConfigDiagnostic(at, "task \(definition.key) is already defined by \(other)"))
                continue
            }
            if definition.handler == .swift && base == nil {
                diagnostics.append(
                    ConfigDiagnostic(
                        at, key: "ExecStart",
                        "missing, and no Swift handler is registered for \(definition.key.identifier)"))
                continue
            }
            if base != nil, case .command = definition.handler {
                diagnostics.append(
                    ConfigDiagnostic(
                        file.execStartLocation ?? at, key: "ExecStart",
                        "\(definition.key) has a Swift handler registered in code; remove ExecStart="))
                continue
            }
            if let user = file.user, user.gid == nil, file.group == nil {
                diagnostics.append(
                    ConfigDiagnostic(
                        file.userLocation ?? at, key: "User",
                        "uid \(user.uid) has no passwd entry, so it has no group: set Group= as well"))
                continue
            }
            if let at = file.relativeTimerLocation, definition.onStartup.isEmpty, definition.onCalendar.isEmpty,
                !definition.onUnitActive.isEmpty || !definition.onUnitInactive.isEmpty
            {
                // As in systemd: these count from the task's last run, so with nothing else they
                // wait for a wake. Loaded as written; said once.
                diagnostics.append(
                    ConfigDiagnostic(
                        at, key: "OnUnitActiveSec",
                        "counts from the task's last run, and nothing starts a first one (no OnStartupSec= "
                            + "or OnCalendar=): it fires only after a wake; add OnStartupSec= for a first run",
                        severity: .warning))
            }
            if let base, base.key != definition.key { definitions[base.key] = nil }
            fromFiles[definition.key] = path
            definitions[definition.key] = shared.share(definition)
        }
        return LoadedConfig(
            daemon: daemon, tasks: definitions.values.sorted { $0.key < $1.key }, diagnostics: diagnostics)
    }

    /// Parses one task file and its drop-ins; nil (with diagnostics) when anything is wrong.
    public static func parseTaskFile(_ path: String, _ diagnostics: inout [ConfigDiagnostic]) -> TaskFile? {
        var file = TaskFile(path: path)
        let before = diagnostics.count
        var sources = [path]
        let dropInDirectory = path + ".d"
        sources += (TextFiles.list(dropInDirectory, suffix: ".conf") ?? []).map { dropInDirectory + "/" + $0 }
        for source in sources {
            switch TextFiles.read(source) {
            case .failure(let error):
                diagnostics.append(ConfigDiagnostic(SourceLocation(file: source, line: 0), "cannot read: \(error)"))
            case .success(let text):
                apply(text, file: source, to: &file, &diagnostics)
            }
        }
        return diagnostics.count == before ? file : nil
    }

    /// Parses a task file's text as if read from `path` (no drop-ins): its definition, or nil with
    /// the diagnostics. What `parseTaskFile` does for each file, without the file system.
    public static func parseTaskText(_ text: String, path: String) -> (TaskDefinition?, [ConfigDiagnostic]) {
        var file = TaskFile(path: path)
        var diagnostics: [ConfigDiagnostic] = []
        apply(text, file: path, to: &file, &diagnostics)
        return (diagnostics.isEmpty ? file.definition(base: nil) : nil, diagnostics)
    }

    /// Applies a task file's text to `file` through the key table.
    static func apply(
        _ text: String, file path: String, to file: inout TaskFile, _ diagnostics: inout [ConfigDiagnostic]
    ) {
        let (entries, syntax) = UnitFileParser.parse(text, file: path)
        diagnostics += syntax
        for entry in entries {
            guard let keys = TaskFileKeys.table[entry.section] else {
                if !entry.section.hasPrefix("X-") {
                    diagnostics.append(
                        ConfigDiagnostic(
                            entry.location, key: entry.key,
                            "unknown section [\(entry.section)]; expected [Task], [Timer] or [Exec]"))
                }
                continue
            }
            guard let apply = keys[entry.key] else {
                if !entry.key.hasPrefix("X-") {
                    diagnostics.append(
                        ConfigDiagnostic(entry.location, key: entry.key, "unknown key in section [\(entry.section)]"))
                }
                continue
            }
            do { try file.apply(entry, apply) } catch { diagnostics.append(error) }
        }
    }

    static func loadDaemon(_ path: String, _ diagnostics: inout [ConfigDiagnostic]) -> DaemonSettings {
        var settings = DaemonSettings()
        var allowUsers: [UInt32]?
        var allowGroups: [UInt32]?
        guard TextFiles.exists(path) else { return settings }
        let text: String
        switch TextFiles.read(path) {
        case .failure(let error):
            diagnostics.append(ConfigDiagnostic(SourceLocation(file: path, line: 0), "cannot read: \(error)"))
            return settings
        case .success(let t): text = t
        }
        let (entries, syntax) = UnitFileParser.parse(text, file: path)
        diagnostics += syntax
        for e in entries {
            guard e.section == "Daemon" else {
                if !e.section.hasPrefix("X-") {
                    diagnostics.append(
                        ConfigDiagnostic(e.location, key: e.key, "unknown section [\(e.section)]; expected [Daemon]"))
                }
                continue
            }
            switch e.key {
            case "StateDirectory", "Socket", "MetricsFile":
                guard e.value.hasPrefix("/") else {
                    diagnostics.append(ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not an absolute path"))
                    continue
                }
                switch e.key {
                case "Socket": settings.socketPath = e.value
                case "MetricsFile": settings.metricsFile = e.value
                default: settings.stateDirectory = e.value
                }
            case "AllowUsers", "AllowGroups":
                do throws(ConfigDiagnostic) {
                    if e.key == "AllowUsers" {
                        allowUsers = try Identities.append(allowUsers, e, groups: false)
                    } else {
                        allowGroups = try Identities.append(allowGroups, e, groups: true)
                    }
                } catch {
                    diagnostics.append(error)
                }
            case "MaxConcurrentRuns":
                guard let n = Int(e.value), (1...100_000).contains(n) else {
                    diagnostics.append(
                        ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not a whole number from 1 to 100000"))
                    continue
                }
                settings.maxConcurrentRuns = n
            case "MaxConnections", "MaxConnectionsPerUser":
                guard let n = Int(e.value), (1...100_000).contains(n) else {
                    diagnostics.append(
                        ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not a whole number from 1 to 100000"))
                    continue
                }
                if e.key == "MaxConnections" { settings.maxConnections = n } else { settings.maxConnectionsPerUser = n }
            case "IdleTimeoutSec", "RequestTimeoutSec":
                guard let span = try? TimeSpan(parsing: e.value), span > .zero, span != .infinity else {
                    diagnostics.append(
                        ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not a finite time span above 0"))
                    continue
                }
                if e.key == "IdleTimeoutSec" { settings.idleTimeout = span } else { settings.requestTimeout = span }
            case "WatchSleep":
                do throws(ConfigDiagnostic) {
                    settings.watchSleep = try TaskFileKeys.boolean(e)
                } catch {
                    diagnostics.append(error)
                }
            case "RunCgroups":
                guard ["auto", "yes", "no"].contains(e.value) else {
                    diagnostics.append(ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not auto, yes or no"))
                    continue
                }
                settings.runCgroups = e.value
            case "SyncIntervalSec":
                guard let span = try? TimeSpan(parsing: e.value) else {
                    diagnostics.append(ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not a time span"))
                    continue
                }
                settings.syncInterval = span
            default:
                if !e.key.hasPrefix("X-") {
                    diagnostics.append(ConfigDiagnostic(e.location, key: e.key, "unknown key in section [Daemon]"))
                }
            }
        }
        if allowUsers != nil || allowGroups != nil {
            settings.access = AccessList(users: allowUsers ?? [], groups: allowGroups ?? [])
        }
        return settings
    }
}
