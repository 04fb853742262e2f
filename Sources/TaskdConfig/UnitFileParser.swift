/// Splits text in systemd unit-file syntax into entries: `[Section]` headers, `Key=Value` lines,
/// `#`/`;` comments, and backslash continuation (comment lines inside a continuation are skipped).
public enum UnitFileParser {
    /// Every assignment in file order, and a diagnostic for each line that is not valid syntax.
    public static func parse(_ text: String, file: String) -> (
        entries: [UnitFileEntry], diagnostics: [ConfigDiagnostic]
    ) {
        var entries: [UnitFileEntry] = []
        var diagnostics: [ConfigDiagnostic] = []
        var section: String?
        var pending: (text: String, line: Int)?
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let lineNumber = index + 1
            var line = trim(Substring(raw))
            if pending != nil, line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if pending == nil, line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            let continues = line.hasSuffix("\\")
            if continues { line.removeLast() }
            if let p = pending {
                pending = (p.text + " " + line, p.line)
            } else {
                pending = (line, lineNumber)
            }
            if continues && index + 1 < lines.count { continue }
            let (logical, start) = pending!
            pending = nil
            let location = SourceLocation(file: file, line: start)
            if logical.hasPrefix("[") {
                guard logical.hasSuffix("]"), logical.count > 2 else {
                    diagnostics.append(ConfigDiagnostic(location, "invalid section header '\(logical)'"))
                    section = nil
                    continue
                }
                section = String(logical.dropFirst().dropLast())
                continue
            }
            guard let eq = logical.firstIndex(of: "=") else {
                diagnostics.append(ConfigDiagnostic(location, "missing '=' in '\(logical)'"))
                continue
            }
            let key = trim(logical[..<eq])
            let value = trim(logical[logical.index(after: eq)...])
            guard let section else {
                diagnostics.append(ConfigDiagnostic(location, key: key, "assignment outside of any [Section]"))
                continue
            }
            guard !key.isEmpty else {
                diagnostics.append(ConfigDiagnostic(location, "missing key name before '='"))
                continue
            }
            entries.append(UnitFileEntry(section: section, key: key, value: value, location: location))
        }
        return (entries, diagnostics)
    }

    /// `s` without leading and trailing whitespace (systemd's set: space, tab, CR, LF, VT, FF),
    /// cut on UTF-8 code units: the hot path of start-up, which parses every task file.
    static func trim(_ s: Substring) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        let bytes = s.utf8
        guard let first = bytes.firstIndex(where: { !isSpace($0) }) else { return "" }
        // After the last non-space byte: the end of a whole scalar, so a valid String index.
        let end = bytes.index(after: bytes.lastIndex(where: { !isSpace($0) })!)
        return String(s[first..<end])
    }
}

/// One `Key=Value` assignment of a unit file, with its section and where it stood.
public struct UnitFileEntry: Hashable, Sendable {
    public var section: String
    public var key: String
    public var value: String
    public var location: SourceLocation
}
