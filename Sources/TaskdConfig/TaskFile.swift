import TaskScheduling

/// One `.task` file and its drop-ins, applied entry by entry through `TaskFileKeys` onto a
/// definition: the defaults, or a Swift task's code-given one. Each key's row writes the definition
/// itself; only what must wait for the whole file (the key, `User=`'s groups, the kind's default
/// budget) is settled by `definition(base:)`.
public struct TaskFile: Sendable {
    public let path: String
    /// The definition so far; its key, budget and handler are settled at the end.
    var definition: TaskDefinition
    /// The command so far; the handler is this command once `ExecStart=` gave it an argv.
    var command = CommandSpec(argv: [])
    var kind: String?
    var identifier: String?
    var budget: TimeSpan?
    var execStartLocation: SourceLocation?
    var user: Identities.User?
    var userLocation: SourceLocation?
    var group: UInt32?
    var supplementaryGroups: [UInt32]?
    /// Where the first `OnUnitActiveSec=`/`OnUnitInactiveSec=` is, for the warning when nothing starts it.
    var relativeTimerLocation: SourceLocation?
    /// Where `Fleet=` was set, for the diagnostic of a `Fleet=once` with no calendar.
    var fleetLocation: SourceLocation?
    /// Where `ConcurrencyGroup=` was set, for the diagnostic of a size unlike the group's.
    var groupLocation: SourceLocation?
    /// Where the first `OnSuccess=`/`OnFailure=` was set, and which, for the diagnostic of a chain's cycle.
    var chainLocation: SourceLocation?
    var chainKey = "OnSuccess"
    /// Where the first `After=` is (a cycle of them is refused there).
    var afterLocation: SourceLocation?
    /// The list keys given so far: the first one in a file replaces the list it starts from.
    var listsStarted: Set<String> = []
    /// The entries applied, in order, to apply again onto a Swift task's own definition.
    private(set) var entries: [UnitFileEntry] = []
    private let base: TaskDefinition?

    /// An empty file at `path`, on top of `base` (a Swift task's code-given definition), if any.
    public init(path: String, base: TaskDefinition? = nil) {
        self.path = path
        self.base = base
        definition =
            base ?? TaskDefinition(key: TaskKey(kind: TaskKind.processing, identifier: "?"), handler: .swift)
    }

    /// `WakeUsers=` and `WakeGroups=`: who besides root may wake or cancel the task.
    var wakeUsers: [UInt32] {
        get { definition.wakeAccess?.users ?? [] }
        set { definition.wakeAccess = AccessList(users: newValue, groups: definition.wakeAccess?.groups ?? []) }
    }
    var wakeGroups: [UInt32] {
        get { definition.wakeAccess?.groups ?? [] }
        set { definition.wakeAccess = AccessList(users: definition.wakeAccess?.users ?? [], groups: newValue) }
    }

    /// The file name without `.task`: the default identifier.
    public var baseName: String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.hasSuffix(".task") ? String(name.dropLast(5)) : name
    }

    /// Applies `text` (read from `source`: this file or a drop-in) through `TaskFileKeys`, keeping
    /// the entries it accepts.
    mutating func apply(_ text: String, from source: String, _ diagnostics: inout [ConfigDiagnostic]) {
        let accepted = TaskFileKeys.table.apply(text, file: source, to: &self, &diagnostics)
        entries += accepted
    }

    /// A list key's entry (systemd's rule): an empty value resets the list; the key's first entry
    /// in the file replaces the list the file started from, later ones append.
    mutating func append<T>(
        _ list: WritableKeyPath<TaskFile, [T]>, _ e: UnitFileEntry,
        _ parse: (UnitFileEntry) throws(ConfigDiagnostic) -> [T]
    ) throws(ConfigDiagnostic) {
        var started = listsStarted
        defer { listsStarted = started }
        try Self.append(e, to: &self[keyPath: list], started: &started, parse)
    }

    /// `append` onto a list among the definition's settings, named in `TaskOptions` (`\.onStartup`):
    /// that key path is a constant, where `\.definition.onStartup` would be built at every entry.
    mutating func append<T>(
        _ setting: WritableKeyPath<TaskOptions, [T]>, _ e: UnitFileEntry,
        _ parse: (UnitFileEntry) throws(ConfigDiagnostic) -> [T]
    ) throws(ConfigDiagnostic) {
        try Self.append(e, to: &definition[dynamicMember: setting], started: &listsStarted, parse)
    }

    /// `append` onto a list among the command's settings, named in `ExecOptions` (`\.environment`).
    mutating func append<T>(
        _ setting: WritableKeyPath<ExecOptions, [T]>, _ e: UnitFileEntry,
        _ parse: (UnitFileEntry) throws(ConfigDiagnostic) -> [T]
    ) throws(ConfigDiagnostic) {
        try Self.append(e, to: &command[dynamicMember: setting], started: &listsStarted, parse)
    }

    private static func append<T>(
        _ e: UnitFileEntry, to list: inout [T], started: inout Set<String>,
        _ parse: (UnitFileEntry) throws(ConfigDiagnostic) -> [T]
    ) throws(ConfigDiagnostic) {
        if e.value.isEmpty || !started.contains(e.key) { list = [] }
        started.insert(e.key)
        if !e.value.isEmpty { list += try parse(e) }
    }

    /// The definition this file describes, on top of `base` (a Swift task's code-given definition), if any.
    public func definition(base: TaskDefinition?) -> TaskDefinition {
        guard let base, base != self.base else { return finished() }
        var file = TaskFile(path: path, base: base)
        // Each entry was accepted when the file was read; applied again, it is accepted again.
        var diagnostics: [ConfigDiagnostic] = []
        file.entries = TaskFileKeys.table.apply(entries, to: &file, &diagnostics)
        return file.finished()
    }

    private func finished() -> TaskDefinition {
        var d = definition
        d.key = TaskKey(kind: kind ?? base?.key.kind ?? TaskKind.processing, identifier: identifier ?? baseName)
        d.budget = budget ?? base?.budget ?? TaskKind.defaultBudget(for: d.key.kind)
        if !command.argv.isEmpty {
            var command = command
            command.identity = identity(command.identity)
            d.handler = .command(command)
        }
        return d
    }

    /// User=, Group=, SupplementaryGroups= as systemd applies them: the gid is Group= or the user's
    /// primary group; with User=, the groups are the user's (initgroups) plus SupplementaryGroups=;
    /// without it, SupplementaryGroups= alone when given.
    private func identity(_ given: ExecIdentity) -> ExecIdentity {
        var identity = given
        identity.uid = user?.uid
        identity.gid = group ?? user?.gid
        if let user {
            identity.userName = user.name
            identity.home = user.home
            identity.shell = user.shell
            let initial = identity.gid.map { Identities.groupList(of: user.name, gid: $0) } ?? []
            identity.groups = initial + (supplementaryGroups ?? []).filter { !initial.contains($0) }
        } else if let supplementaryGroups {
            identity.groups = supplementaryGroups
        }
        return identity
    }
}
