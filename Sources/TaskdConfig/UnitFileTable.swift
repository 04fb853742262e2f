/// A table of `[Section] Key=` rows, each with the parser that applies its value onto a `Target`
/// (systemd's `ConfigTableItem` shape): the one routine through which task files and `taskd.conf`
/// are applied, so both report unknown sections, unknown keys and bad values alike, with file:line.
struct UnitFileTable<Target>: Sendable {
    /// Parses one entry's value and writes it into the target; throws its diagnostic otherwise.
    typealias Apply = @Sendable (inout Target, UnitFileEntry) throws(ConfigDiagnostic) -> Void

    /// The sections in the order they are documented, for messages and listings.
    let sections: [String]
    private let rows: [String: [String: Apply]]

    /// The rows of each section; the order of the sections is the order given.
    init(_ sections: KeyValuePairs<String, [String: Apply]>) {
        self.sections = sections.map(\.key)
        rows = Dictionary(uniqueKeysWithValues: sections.map { ($0.key, $0.value) })
    }

    /// Every key of every section, sections in order and keys sorted: what a reference page lists.
    var keys: [(section: String, keys: [String])] {
        sections.map { ($0, rows[$0, default: [:]].keys.sorted()) }
    }

    /// The section whose rows include `key`, if any.
    func section(of key: String) -> String? { sections.first { rows[$0]?[key] != nil } }

    /// The row for an entry's section and key, if the table has one.
    func row(_ e: UnitFileEntry) -> Apply? { rows[e.section]?[e.key] }

    /// Parses `text` (read from `path`) and applies it onto `target`; returns the entries accepted.
    @discardableResult
    func apply(_ text: String, file path: String, to target: inout Target, _ diagnostics: inout [ConfigDiagnostic])
        -> [UnitFileEntry]
    {
        let (entries, syntax) = UnitFileParser.parse(text, file: path)
        diagnostics += syntax
        return apply(entries, to: &target, &diagnostics)
    }

    /// Applies each entry through its row, in order; returns the entries accepted. An unknown section
    /// or key is a diagnostic unless it starts with `X-` (systemd's extension prefix), and is skipped.
    @discardableResult
    func apply(_ entries: [UnitFileEntry], to target: inout Target, _ diagnostics: inout [ConfigDiagnostic])
        -> [UnitFileEntry]
    {
        var accepted: [UnitFileEntry] = []
        accepted.reserveCapacity(entries.count)
        for entry in entries {
            guard let keys = rows[entry.section] else {
                if !entry.section.hasPrefix("X-") {
                    let expected = UnitFileValues.either(sections.map { "[\($0)]" })
                    diagnostics.append(
                        ConfigDiagnostic(
                            entry.location, key: entry.key,
                            "unknown section [\(entry.section)]; expected \(expected)"))
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
            do throws(ConfigDiagnostic) {
                try apply(&target, entry)
                accepted.append(entry)
            } catch {
                diagnostics.append(error)
            }
        }
        return accepted
    }
}
