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
        // Each group's size, and where it was given (nil: in code): every task of a group gives the same.
        var groups: [String: (size: Int, at: SourceLocation?)] = [:]
        var chainLocations: [TaskKey: (at: SourceLocation, key: String)] = [:]
        var afterLocations: [TaskKey: SourceLocation] = [:]
        for task in swiftTasks {
            if let g = task.concurrencyGroup, groups[g.name] == nil { groups[g.name] = (g.size, nil) }
        }
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
            guard
                admits(file, definition, base: base, at: at, daemon: daemon, groups: &groups, &diagnostics)
            else { continue }
            if let base, base.key != definition.key { definitions[base.key] = nil }
            if let chain = file.chainLocation { chainLocations[definition.key] = (chain, file.chainKey) }
            if let after = file.afterLocation { afterLocations[definition.key] = after }
            fromFiles[definition.key] = path
            definitions[definition.key] = shared.share(definition)
        }
        dropCycles(&definitions, chains: chainLocations, afters: afterLocations, &diagnostics)
        return LoadedConfig(
            daemon: daemon, tasks: definitions.values.sorted { $0.key < $1.key }, diagnostics: diagnostics)
    }

    /// Whether a task file's definition loads: false, with its diagnostic, when its handler, user,
    /// fleet or group cannot be; a warning for what loads as written but will not do what it seems.
    /// `groups` gets the size of a group seen first here.
    private static func admits(
        _ file: TaskFile, _ definition: TaskDefinition, base: TaskDefinition?, at: SourceLocation,
        daemon: DaemonSettings, groups: inout [String: (size: Int, at: SourceLocation?)],
        _ diagnostics: inout [ConfigDiagnostic]
    ) -> Bool {
        func refuse(_ location: SourceLocation?, _ key: String, _ message: String) -> Bool {
            diagnostics.append(ConfigDiagnostic(location ?? at, key: key, message))
            return false
        }
        if definition.key.kind == SubmittedTaskFile.kind {
            return refuse(nil, "Kind", "'\(SubmittedTaskFile.kind)' is the kind of tasks taskctl submit adds")
        }
        if definition.handler == .swift && base == nil {
            return refuse(
                nil, "ExecStart", "missing, and no Swift handler is registered for \(definition.key.identifier)")
        }
        if base != nil, case .command = definition.handler {
            return refuse(
                file.execStartLocation, "ExecStart",
                "\(definition.key) has a Swift handler registered in code; remove ExecStart=")
        }
        if let user = file.user, user.gid == nil, file.group == nil {
            return refuse(
                file.userLocation, "User", "uid \(user.uid) has no passwd entry, so it has no group: set Group= as well"
            )
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
        if definition.fleet == .once, definition.onCalendar.isEmpty {
            // The slots hosts share are calendar elapses: interval timers differ from host to host.
            return refuse(
                file.fleetLocation, "Fleet",
                "once needs OnCalendar=: the fleet shares calendar slots, which every host names alike")
        }
        if definition.fleet != .host, daemon.fleet.endpoints.isEmpty {
            // Loaded as written: it runs on every host until the fleet is configured.
            diagnostics.append(
                ConfigDiagnostic(
                    file.fleetLocation ?? at, key: "Fleet",
                    "no FleetEndpoints= in taskd.conf's [Daemon]: the task runs on this host as Fleet=host would",
                    severity: .warning))
        }
        if let g = definition.concurrencyGroup {
            if let known = groups[g.name], known.size != g.size {
                let there = known.at.map { "\($0.file):\($0.line)" } ?? "a task registered in code"
                return refuse(
                    file.groupLocation, "ConcurrencyGroup",
                    "group \(g.name) has size \(known.size) (\(there)); every task of a group gives the same size")
            }
            if groups[g.name] == nil { groups[g.name] = (g.size, file.groupLocation) }
        }
        return true
    }

    /// Leaves out the task that closes each cycle: of `OnSuccess=`/`OnFailure=` wakes (its tasks
    /// would wake each other for ever) and of `After=` (their runs would wait for each other for
    /// ever). The culprit is the last in key order that was given in a file, said at its line.
    private static func dropCycles(
        _ definitions: inout [TaskKey: TaskDefinition], chains: [TaskKey: (at: SourceLocation, key: String)],
        afters: [TaskKey: SourceLocation], _ diagnostics: inout [ConfigDiagnostic]
    ) {
        let inCode = SourceLocation(file: "(registered in code)", line: 0)
        while let cycle = ChainGraph.cycle(in: definitions) {
            let culprit = cycle.last { chains[$0] != nil } ?? cycle.last!
            let path = (cycle + [cycle[0]]).map(\.identifier).joined(separator: " → ")
            diagnostics.append(
                ConfigDiagnostic(
                    chains[culprit]?.at ?? inCode, key: chains[culprit]?.key ?? "OnSuccess",
                    "\(culprit.identifier) closes a cycle of OnSuccess=/OnFailure= wakes (\(path)): it would run for ever"
                ))
            definitions[culprit] = nil
        }
        while let cycle = ChainGraph.cycle(in: definitions, edges: \.after) {
            let culprit = cycle.last { afters[$0] != nil } ?? cycle.last!
            let path = (cycle + [cycle[0]]).map(\.identifier).joined(separator: " after ")
            diagnostics.append(
                ConfigDiagnostic(
                    afters[culprit] ?? inCode, key: "After",
                    "\(culprit.identifier) closes a cycle of After= (\(path)): its runs would wait for each other for ever"
                ))
            definitions[culprit] = nil
        }
    }

    /// Parses one task file and its drop-ins; nil (with diagnostics) when anything is wrong.
    public static func parseTaskFile(_ path: String, _ diagnostics: inout [ConfigDiagnostic]) -> TaskFile? {
        var file = TaskFile(path: path)
        let before = diagnostics.count
        let dropInDirectory = path + ".d"
        let dropIns = (TextFiles.list(dropInDirectory, suffix: ".conf") ?? []).map { dropInDirectory + "/" + $0 }
        for source in [path] + dropIns {
            guard let text = read(source, &diagnostics) else { continue }
            file.apply(text, from: source, &diagnostics)
        }
        return diagnostics.count == before ? file : nil
    }

    /// Parses a task file's text as if read from `path` (no drop-ins): its definition, or nil with
    /// the diagnostics. What `parseTaskFile` does for each file, without the file system.
    public static func parseTaskText(_ text: String, path: String) -> (TaskDefinition?, [ConfigDiagnostic]) {
        var file = TaskFile(path: path)
        var diagnostics: [ConfigDiagnostic] = []
        file.apply(text, from: path, &diagnostics)
        return (diagnostics.isEmpty ? file.definition(base: nil) : nil, diagnostics)
    }

    /// Parses `taskd.conf`'s text as if read from `path`: the settings it gives, and the diagnostics
    /// (a key with a bad value is left at its default). What `load` does with the file.
    public static func parseDaemonText(_ text: String, path: String) -> (DaemonSettings, [ConfigDiagnostic]) {
        var settings = DaemonSettings()
        var diagnostics: [ConfigDiagnostic] = []
        DaemonFileKeys.table.apply(text, file: path, to: &settings, &diagnostics)
        return (settings, diagnostics)
    }

    /// The settings of `taskd.conf` at `path`; the defaults when there is none.
    static func loadDaemon(_ path: String, _ diagnostics: inout [ConfigDiagnostic]) -> DaemonSettings {
        guard TextFiles.exists(path), let text = read(path, &diagnostics) else { return DaemonSettings() }
        let (settings, found) = parseDaemonText(text, path: path)
        diagnostics += found
        return settings
    }

    /// The text of the file at `path`, or nil with a diagnostic at its line 0.
    private static func read(_ path: String, _ diagnostics: inout [ConfigDiagnostic]) -> String? {
        switch TextFiles.read(path) {
        case .failure(let error):
            diagnostics.append(ConfigDiagnostic(SourceLocation(file: path, line: 0), "cannot read: \(error)"))
            return nil
        case .success(let text):
            return text
        }
    }
}
