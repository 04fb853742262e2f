import TaskScheduling
import TaskdProtocol

/// `taskctl timespan SPAN... [--json]`: parses time spans and prints them exactly as
/// `systemd-analyze timespan` does. No daemon needed.
enum TimespanCommand {
    static func run(_ spans: [String], json: Bool) throws -> ExitCode {
        guard !spans.isEmpty else { throw UsageError("timespan needs at least one SPAN") }
        if json { return printJSON(spans) }
        for (i, text) in spans.enumerated() {
            let span: TimeSpan
            do {
                span = try TimeSpan(parsing: text)
            } catch {
                // systemd-analyze stops at the first span it cannot parse.
                Terminal.err("Failed to parse time span '\(text)': \(strerror(error))")
                if (try? CalendarSpec(parsing: text)) != nil {
                    Terminal.err(
                        "Hint: this expression is a valid calendar specification. Use 'taskctl calendar \"\(text)\"' instead?"
                    )
                }
                return .runDidNotComplete
            }
            Terminal.out(human(text, span))
            if i < spans.count - 1 { Terminal.out("") }
        }
        return .success
    }

    /// The block `systemd-analyze timespan` prints for one span. Its table prints the original line by
    /// line (a final newline ends the last line) under the first; a line narrower than the column
    /// (widest of those lines, the microseconds and the human form) loses its trailing white space.
    static func human(_ text: String, _ span: TimeSpan) -> String {
        let (usec, normalized) = (String(span.microseconds), span.description)
        var lines = text.utf8.split(separator: 10, omittingEmptySubsequences: false).map { String(Substring($0)) }
        if lines.count > 1, text.utf8.last == 10 { lines.removeLast() }
        // A valid span is ASCII, µ and μ: one column per scalar.
        let width = lines.map(\.unicodeScalars.count).reduce(max(usec.count, normalized.count), max)
        let original = lines.map { line in
            line.unicodeScalars.count < width ? String(line.reversed().drop { " \t\r".contains($0) }.reversed()) : line
        }.joined(separator: "\n" + String(repeating: " ", count: 10))
        return "Original: \(original)\n      \u{03BC}s: \(usec)\n   Human: \(normalized)"
    }

    /// One JSON array: `{human, span, usec}` or `{error, span}` per span, every one of them; the errors
    /// go to stderr too, and any of them makes the exit status 1.
    static func printJSON(_ spans: [String]) -> ExitCode {
        var failed = false
        let items = spans.map { text -> [UInt8] in
            var o = JSONObjectWriter()
            do throws(TimeSpanError) {
                let span = try TimeSpan(parsing: text)
                o.string("human", span.description)
                o.string("span", text)
                o.json("usec", Array(String(span.microseconds).utf8))  // infinity is 2^64 - 1, past Int64
            } catch {
                failed = true
                Terminal.err("Failed to parse time span '\(text)': \(strerror(error))")
                o.string("error", error.reason)
                o.string("span", text)
            }
            return o.finish()
        }
        Terminal.out(String(decoding: JSONObjectWriter.array(items), as: UTF8.self))
        return failed ? .runDidNotComplete : .success
    }

    /// The errno text systemd prints for the failure.
    static func strerror(_ error: TimeSpanError) -> String {
        error.outOfRange ? "Numerical result out of range" : "Invalid argument"
    }
}
