import TaskScheduling

/// The value parsers the key tables share (`TaskFileKeys`, `DaemonFileKeys`): each reads one
/// entry's value, or throws a diagnostic with the entry's file:line and key.
enum UnitFileValues {
    /// A time span as systemd writes one (`5min 30s`, `infinity`); the error is the parser's.
    static func timeSpan(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> TimeSpan {
        do {
            return try TimeSpan(parsing: e.value)
        } catch {
            throw ConfigDiagnostic(e.location, key: e.key, error.description)
        }
    }

    /// A time span `accepts` takes; otherwise "'value' is not `what`".
    static func timeSpan(
        _ e: UnitFileEntry, _ what: String, where accepts: (TimeSpan) -> Bool = { _ in true }
    ) throws(ConfigDiagnostic) -> TimeSpan {
        guard let span = try? TimeSpan(parsing: e.value), accepts(span) else {
            throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not \(what)")
        }
        return span
    }

    /// A time span other than `infinity`.
    static func finiteSpan(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> TimeSpan {
        let span = try timeSpan(e)
        guard !span.isInfinite else { throw ConfigDiagnostic(e.location, key: e.key, "must be finite") }
        return span
    }

    /// A whole number in `range`.
    static func integer(_ e: UnitFileEntry, in range: ClosedRange<Int>) throws(ConfigDiagnostic) -> Int {
        guard let value = Int(e.value), range.contains(value) else {
            throw ConfigDiagnostic(
                e.location, key: e.key,
                "'\(e.value)' is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// systemd's booleans: 1/yes/y/true/t/on and 0/no/n/false/f/off, any case.
    static func boolean(_ e: UnitFileEntry, choices: String = "a boolean (yes or no)") throws(ConfigDiagnostic) -> Bool
    {
        switch e.value.lowercased() {
        case "1", "yes", "y", "true", "t", "on": return true
        case "0", "no", "n", "false", "f", "off": return false
        default: throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not \(choices)")
        }
    }

    /// One word of a fixed list (`Overlap=`, `ConditionLost=`); the error names the choices.
    static func choice<T: RawRepresentable>(_ e: UnitFileEntry, _ choices: String) throws(ConfigDiagnostic) -> T
    where T.RawValue == String {
        guard let value = T(rawValue: e.value) else {
            throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not \(choices)")
        }
        return value
    }

    /// One of `words`, kept as written (`RunCgroups=`); the error names them.
    static func choice(_ e: UnitFileEntry, _ words: [String]) throws(ConfigDiagnostic) -> String {
        guard words.contains(e.value) else {
            throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not \(either(words))")
        }
        return e.value
    }

    /// An absolute path (`WorkingDirectory=`, `StateDirectory=`).
    static func absolutePath(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> String {
        guard e.value.hasPrefix("/") else {
            throw ConfigDiagnostic(e.location, key: e.key, "'\(e.value)' is not an absolute path")
        }
        return e.value
    }

    /// A command line split as systemd splits `ExecStart=`, at least one word.
    static func words(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> [String] {
        let split: [String]
        do {
            split = try WordSplitter.split(e.value)
        } catch {
            throw ConfigDiagnostic(e.location, key: e.key, error.message)
        }
        guard !split.isEmpty else { throw ConfigDiagnostic(e.location, key: e.key, "empty command line") }
        return split
    }

    /// A kind or identifier: letters, digits, `_`, `-`, `.`; no `:` (it separates kind from identifier).
    static func word(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> String {
        guard isWord(e.value) else {
            throw ConfigDiagnostic(
                e.location, key: e.key, "'\(e.value)' must be letters, digits, '_', '-' or '.' (at most 128)")
        }
        return e.value
    }

    /// True for a kind or identifier (see `word`).
    static func isWord(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 128
            && s.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0))
            }
    }

    /// `a`, `a or b`, `a, b or c`: the alternatives a message names.
    static func either(_ words: [String]) -> String {
        guard let last = words.last else { return "" }
        return words.count == 1 ? last : words.dropLast().joined(separator: ", ") + " or " + last
    }
}
