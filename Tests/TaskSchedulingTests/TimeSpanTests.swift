import Foundation
import Testing

@testable import TaskScheduling

@Suite("Time spans, parsed and printed as systemd does")
struct TimeSpanTests {
    /// (input, microseconds, canonical form), each checked against `systemd-analyze timespan` below.
    static let table: [(String, UInt64, String)] = [
        ("0", 0, "0"), ("30s", 30_000_000, "30s"), ("90", 90_000_000, "1min 30s"),
        ("5min 30s", 330_000_000, "5min 30s"), ("5min30s", 330_000_000, "5min 30s"), ("1h", 3_600_000_000, "1h"),
        ("1h 30min", 5_400_000_000, "1h 30min"), ("2d", 172_800_000_000, "2d"), ("1w 2d", 777_600_000_000, "1w 2d"),
        ("1M", 2_629_800_000_000, "1month"), ("1month", 2_629_800_000_000, "1month"), ("1y", 31_557_600_000_000, "1y"),
        ("1.5s", 1_500_000, "1.500000s"), ("3.25ms", 3_250, "3.250ms"), ("100us", 100, "100us"),
        ("100usec", 100, "100us"), ("100µs", 100, "100us"), ("100μs", 100, "100us"),
        ("2 hours", 7_200_000_000, "2h"), ("1 minute 1 second", 61_000_000, "1min 1s"),
        ("59.9s", 59_900_000, "59.900000s"),
        ("61s", 61_000_000, "1min 1s"), ("5m", 300_000_000, "5min"), ("20msec", 20_000, "20ms"),
        ("1hr", 3_600_000_000, "1h"), ("3 weeks", 1_814_400_000_000, "3w"), ("12.34 .56", 12_900_000, "12.900000s"),
        ("5 3", 8_000_000, "8s"), ("+5s", 5_000_000, "5s"), (" 7s ", 7_000_000, "7s"), ("1.0000001s", 1_000_000, "1s"),
        ("infinity", UInt64.max, "infinity"), ("\u{0B}5s", 5_000_000, "5s"), ("\u{0B}-0", 0, "0"),
        ("9223372036854775807us", 9_223_372_036_854_775_807, "292271y 1w 1d 10h 54.775807s"),
        ("584541y 0.9999999999999999999999y", 18_446_742_619_199_999_973, "584541y 11month 4w 2d 10h 29min 59.999973s"),
        ("1y 1month 1w 1d 1h 1min 1s 1ms 1us", 34_882_261_001_001, "1y 1month 1w 1d 1h 1min 1.001001s"),
    ]

    static let rejected = [
        "", "   ", "1.2.3", "1.s", "-1s", "5x", "s", "1 s s", "infinity 5s", "1.", "abc", "9999999999999999999s",
        // strtoll() reads at most Int64.max and nothing from "+.5"; a fraction must not pass infinity either.
        "9223372036854775808us", "+.5s", "\u{0B}-1", "18446744073708s 0.99999999y",
    ]

    /// systemd's errno for each kind of failure: ERANGE (negative or too large) or EINVAL.
    static let errnos: [(String, Bool)] = [
        ("-1s", true), ("-0", true), ("99999999999999999999s", true), ("584542y", true), ("\u{0B}-1", true),
        ("9223372036854775808us", true), ("18446744073708s 0.99999999y", true), ("5x", false), ("1.s", false),
        ("", false), ("infinity 5s", false), ("+.5s", false), ("+ 5s", false),
    ]

    @Test("parse → microseconds → canonical text", arguments: table)
    func parseAndFormat(input: String, usec: UInt64, canonical: String) throws {
        let span = try TimeSpan(parsing: input)
        #expect(span.microseconds == usec)
        #expect(span.description == canonical)
        #expect(try TimeSpan(parsing: canonical) == span)  // round trip
    }

    @Test("invalid time spans are rejected with the input named", arguments: rejected)
    func reject(input: String) {
        #expect(throws: TimeSpanError.self) { try TimeSpan(parsing: input) }
    }

    @Test("from 584542 years on, the canonical text cannot be read back: systemd's cannot either")
    func largestSpans() throws {
        let span = try TimeSpan(parsing: "18446744073708.9999999s")
        #expect(span.microseconds == 18_446_744_073_708_999_999)
        #expect(span.description == "584542y 2w 2d 20h 1min 48.999999s")
        #expect(throws: TimeSpanError.self) { try TimeSpan(parsing: span.description) }
    }

    @Test("an error says whether systemd's would be ERANGE or EINVAL", arguments: errnos)
    func errno(input: String, outOfRange: Bool) {
        #expect(throws: TimeSpanError.self) { try TimeSpan(parsing: input) }
        do { _ = try TimeSpan(parsing: input) } catch { #expect(error.outOfRange == outOfRange, "\(input)") }
    }

    @Test("systemd-analyze timespan agrees on every row and every rejection")
    func oracle() async throws {
        guard let analyze = Self.analyze() else { return }
        for (input, usec, canonical) in Self.table
        where input != "infinity" && !input.hasPrefix("+") && !input.hasPrefix(" ") {
            let out = try await run(analyze, ["timespan", "--", input])
            #expect(out.contains("μs: \(usec)\n"), "systemd-analyze disagrees on '\(input)': \(out)")
            #expect(out.contains("Human: \(canonical)\n"), "systemd-analyze prints '\(input)' differently: \(out)")
        }
        for input in Self.rejected where !input.isEmpty && !input.allSatisfy(\.isWhitespace) {
            let out = try await run(analyze, ["timespan", "--", input])
            #expect(out.contains("Failed to parse"), "systemd-analyze accepts '\(input)': \(out)")
        }
    }

    @Test("a generated corpus of 300 spans (seeded) parses and prints as systemd-analyze timespan does")
    func generatedCorpus() async throws {
        guard let analyze = Self.analyze() else { return }
        var rng = SeededRandom(seed: 2026_11_21)
        let units = [
            "us", "usec", "ms", "msec", "s", "sec", "seconds", "m", "min", "minutes", "h", "hr", "hours", "d", "days",
            "w", "weeks", "M", "months", "y", "years", "",
        ]
        var inputs: [String] = []
        for _ in 0..<300 {
            let parts = (0..<Int(rng.next() % 3 + 1)).map { _ -> String in
                let number = rng.next() % 4 == 0 ? "\(rng.next() % 100).\(rng.next() % 1000)" : "\(rng.next() % 1000)"
                let unit = units[Int(rng.next() % UInt64(units.count))]
                return number + (rng.next() % 3 == 0 ? " " : "") + unit
            }
            inputs.append(parts.joined(separator: " "))
        }
        // One systemd-analyze call for all of them: it prints one block per input, in order.
        let out = try await run(analyze, ["timespan", "--"] + inputs)
        let usecs = out.split(separator: "\n").filter { $0.contains("μs: ") }.map {
            UInt64($0.split(separator: " ").last!)!
        }
        let humans = out.split(separator: "\n").filter { $0.contains("Human: ") }.map {
            String($0.split(separator: ": ", maxSplits: 1)[1])
        }
        let accepted = inputs.compactMap { try? TimeSpan(parsing: $0) }
        #expect(accepted.count == inputs.count, "taskd rejected inputs systemd may accept")
        #expect(usecs == accepted.map(\.microseconds))
        #expect(humans == accepted.map(\.description))
        #expect(usecs.count == 300)
    }

    @Test("format with a coarser accuracy drops what is below it, as systemd's format_timespan()")
    func accuracy() {
        #expect(TimeSpan(microseconds: 61_500_000).format(accuracy: 1_000_000) == "1min 1s")
        #expect(TimeSpan(microseconds: 1_204_321).format(accuracy: 1_000) == "1.204s")
        #expect(TimeSpan(microseconds: 4_547).format(accuracy: 1_000) == "4ms")
    }

    /// The systemd-analyze binary, or nil (recorded as an issue: the oracle must run).
    static func analyze() -> String? {
        let path = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first(
            where: FileManager.default.isExecutableFile)
        if path == nil { Issue.record("systemd-analyze is not installed; the oracle cannot run") }
        return path
    }

    private func run(_ path: String, _ arguments: [String]) async throws -> String {
        try await offThePool { try Self.runBlocking(path, arguments) }
    }

    private static func runBlocking(_ path: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
