import TaskScheduling

/// The task file of a transient task (`taskctl submit`): composed from a request, kept in the
/// state folder's `submitted/`, read back at start; the same keys and diagnostics as `tasks.d`.
public enum SubmittedTaskFile {
    /// The kind of every submitted task: `submitted:NAME` never collides with a configured task.
    public static let kind = TaskKind.submitted

    /// Keys a request may not give: the daemon writes them (the command, the name, the time), or
    /// they tie the task to others (chains, `After=`), which a transient task does not.
    static let reserved: Set<String> = [
        "Kind", "Identifier", "ExecStart", "OnCalendar", "OnStartupSec", "OnUnitActiveSec",
        "OnUnitInactiveSec",
    ]
    /// Keys that tie a task to others; a submitted task stands alone.
    static let tying: Set<String> = ["OnSuccess", "OnFailure", "OnOverdue", "After", "Fleet"]

    /// The file's text: `header` as comments, the command, `calendar` (with `Persistent=yes` when
    /// `once`: a time passed while taskd was down runs at its start), the identity, `WakeUsers=`
    /// the submitter unless given, then each of `properties` (`Key=Value`) in the section its key
    /// belongs to. Throws what is wrong with a property.
    public static func compose(
        header: [String], command: [String], calendar: String, once: Bool, submitter: UInt32, user: UInt32?,
        group: UInt32?, properties: [String]
    ) throws(ConfigDiagnostic) -> String {
        var sections: [String: [String]] = ["Task": ["Kind=\(kind)"], "Timer": ["OnCalendar=\(calendar)"]]
        if once { sections["Timer"]!.append("Persistent=yes") }
        sections["Exec"] = ["ExecStart=" + command.map(quote).joined(separator: " ")]
        if let user { sections["Exec"]!.append("User=\(user)") }
        if let group { sections["Exec"]!.append("Group=\(group)") }
        if !properties.contains(where: { $0.hasPrefix("WakeUsers=") || $0.hasPrefix("WakeGroups=") }) {
            // Only its submitter (with root and taskd's user) may wake or cancel it.
            sections["Task"]!.append("WakeUsers=\(submitter)")
        }
        for (index, property) in properties.enumerated() {
            let key = String(property.prefix { $0 != "=" })
            let at = SourceLocation(file: "property", line: index + 1)
            guard !property.contains("\n") else { throw ConfigDiagnostic(at, key: key, "must be one line") }
            guard !tying.contains(key) else {
                throw ConfigDiagnostic(
                    at, key: key, "ties the task to other tasks or hosts; a submitted task stands alone")
            }
            guard !reserved.contains(key) else {
                throw ConfigDiagnostic(at, key: key, "not for a submitted task (its command and time are given apart)")
            }
            guard let section = TaskFileKeys.table.section(of: key) else {
                throw ConfigDiagnostic(at, key: key, "not a task-file key (see docs/configuration.md)")
            }
            sections[section, default: []].append(property)
        }
        var text = header.map { "# " + $0 + "\n" }.joined()
        for section in TaskFileKeys.table.sections where sections[section] != nil {
            text += "[\(section)]\n" + sections[section]!.map { $0 + "\n" }.joined()
        }
        return text
    }

    /// The submitted tasks kept in `directory` (`NAME.task` each), and what is wrong with the others.
    public static func load(directory: String) -> (tasks: [TaskDefinition], diagnostics: [ConfigDiagnostic]) {
        var tasks: [TaskDefinition] = []
        var diagnostics: [ConfigDiagnostic] = []
        for name in TextFiles.list(directory, suffix: ".task") ?? [] {
            let path = directory + "/" + name
            guard let file = ConfigLoader.parseTaskFile(path, &diagnostics) else { continue }
            let definition = file.definition(base: nil)
            guard definition.key.kind == kind, case .command = definition.handler else {
                diagnostics.append(
                    ConfigDiagnostic(SourceLocation(file: path, line: 1), key: "Kind", "not a submitted task's file"))
                continue
            }
            tasks.append(definition)
        }
        return (tasks, diagnostics)
    }

    /// `word` quoted so that `ExecStart=` splits it back to itself.
    static func quote(_ word: String) -> String {
        var out = "\""
        for c in word.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if c.value < 0x20 || c.value == 0x7F {
                    out += "\\x" + (c.value < 0x10 ? "0" : "") + String(c.value, radix: 16)
                } else {
                    out.unicodeScalars.append(c)
                }
            }
        }
        return out + "\""
    }
}
