import TaskScheduling
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `taskctl calendar EXPR... [--base-time T] [--iterations N] [--json]`: normalizes calendar
/// expressions and prints their next elapses exactly as `systemd-analyze calendar` does. No daemon needed.
enum CalendarCommand {
    static func run(_ expressions: [String], baseTime: String?, iterations: String?, json: Bool) throws -> ExitCode {
        guard !expressions.isEmpty else { throw UsageError("calendar needs at least one EXPRESSION") }
        let count =
            try iterations.map { text throws(UsageError) -> Int in
                guard let n = Int(text), n > 0 else { throw UsageError("--iterations needs a positive number") }
                return n
            } ?? 1
        let now = Terminal.nowUSec()
        var base = now
        if let baseTime {
            do { base = try Timestamp.parse(baseTime, now: now) } catch { throw UsageError(error.description) }
        }
        var results: [JSONValue] = []
        var blocks: [String] = []
        var failed = false
        for expression in expressions {
            let spec: CalendarSpec
            do {
                spec = try CalendarSpec(parsing: expression)
            } catch {
                failed = true
                Terminal.err("Failed to parse calendar specification '\(expression)': \(error.reason)")
                results.append(.object(["expression": .string(expression), "error": .string(error.reason)]))
                continue
            }
            var elapses: [UInt64] = []
            var t = base
            while elapses.count < count, let next = spec.nextElapse(after: t) {
                elapses.append(next)
                t = next
            }
            results.append(
                .object([
                    "expression": .string(expression), "normalized": .string(spec.description),
                    "nextElapseUSec": .array(elapses.map { .int(Int64($0)) }),
                ]))
            blocks.append(human(expression, spec, elapses, now: now))
        }
        if json {
            Terminal.out(JSONValue.array(results).description)
        } else if !blocks.isEmpty {
            Terminal.out(blocks.joined(separator: "\n\n"))
        }
        return failed ? .runDidNotComplete : .success
    }

    /// The block `systemd-analyze calendar` prints for one expression.
    static func human(_ expression: String, _ spec: CalendarSpec, _ elapses: [UInt64], now: UInt64) -> String {
        var lines: [String] = []
        let normalized = spec.description
        if normalized != expression { lines.append("  Original form: \(expression)") }
        lines.append("Normalized form: \(normalized)")
        guard !elapses.isEmpty else {
            lines.append("    Next elapse: never")
            return lines.joined(separator: "\n")
        }
        let inUTC = Timestamp.localZoneIsUTC
        for (i, t) in elapses.enumerated() {
            let label = i == 0 ? "    Next elapse" : "       Iter. #\(i + 1)"
            lines.append("\(label): \(Timestamp.format(t))")
            if !inUTC { lines.append("       (in UTC): \(Timestamp.format(t, utc: true))") }
            lines.append("       From now: \(Timestamp.relative(t, now: now))")
        }
        return lines.joined(separator: "\n")
    }
}
