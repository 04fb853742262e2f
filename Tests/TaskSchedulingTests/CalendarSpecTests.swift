import Foundation
import Testing

@testable import TaskScheduling

/// Runs `systemd-analyze calendar` with `TZ`, returning per expression the normalized form and
/// the next elapses in UTC seconds ([] when it never elapses), or nil when it rejects the expression.
enum CalendarOracle {
    static let path = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first(
        where: FileManager.default.isExecutableFile)

    static func run(_ expression: String, tz: String, base: Int, iterations: Int) async throws -> (String, [Int])? {
        try await offThePool { try runBlocking(expression, tz: tz, base: base, iterations: iterations) }
    }

    private static func runBlocking(_ expression: String, tz: String, base: Int, iterations: Int) throws -> (
        String, [Int]
    )? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path!)
        p.arguments = ["calendar", "--iterations=\(iterations)", "--base-time=@\(base)", "--", expression]
        p.environment = ["TZ": tz, "PATH": "/usr/bin:/bin", "SYSTEMD_COLORS": "0"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { return nil }
        var normalized = ""
        var times: [Int] = []
        for line in out.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("Normalized form: ") { normalized = String(line.dropFirst(17)) }
            let isUTCLine = line.hasPrefix("(in UTC): ")
            let isElapse = line.hasPrefix("Next elapse: ") || line.hasPrefix("Iter. #")
            guard isUTCLine || (isElapse && tz == "UTC"), line.hasSuffix(" UTC") else { continue }
            let fields = line.split(separator: " ")
            let date = fields[fields.count - 3].split(separator: "-").map { Int($0)! }
            let time = fields[fields.count - 2].split(separator: ":").map { Int($0)! }
            var parts = tm()
            parts.tm_year = Int32(date[0] - 1900)
            parts.tm_mon = Int32(date[1] - 1)
            parts.tm_mday = Int32(date[2])
            parts.tm_hour = Int32(time[0])
            parts.tm_min = Int32(time[1])
            parts.tm_sec = Int32(time[2])
            times.append(Int(timegm(&parts)))
        }
        return (normalized, times)
    }
}

@Suite("Calendar expressions, against systemd-analyze calendar", .serialized)
struct CalendarSpecTests {
    static let expressions = [
        "minutely", "hourly", "daily", "weekly", "monthly", "yearly", "annually", "quarterly", "semiannually",
        "semi-annually", "*:0/15", "9..17:0/15", "Mon..Fri 9:00", "Sat,Sun 10:00", "mon,wed,FRIDAY *-*-* 12:00",
        "Mon-Wed 8:00", "Monday..Wednesday,Fri 7:00", "*-*-01 00:00", "*-1/3-1", "*-*~01", "*-02~03/1", "*-02~01",
        "*-*~07/1 8:00", "2026-03-29 02:30", "*-02-29 12:00", "*-02-30", "2199-12-31 23:59:59", "*-*-* *:*:30.5",
        "*:*:0/7.5", "12:00", "00:00:00", "*-*-* 02:30:00", "*-10-25 02:30", "*-11-01 01:30", "Tue *-*-1..7 10:00",
        "*-*-* 1,3,5:00", "*:00 UTC", "*-*-* 09:00 Europe/Berlin", "*-*-* 09:00 America/New_York",
        "2030-*-* 00:00", "68-01-01", "12-25", "Wed *-*-* 0/6:00", "*:5,55,5,25", "Sun *-*-* 03:00",
        "2026..2028-06-15 12:00", "*-*-* 23:59:59.999999", "@1767225600", "Fri *-*-13 13:13", "*-*-* *:*:*",
        "Mon, 9:00",
        // `@` reads its number as strtoul() does: leading white space, one sign, `-N` wrapping around.
        "@ 1767225600", "@+1767225600", "@\t1767225600", "@-0", "@-18446744073709551615", "@7258118399", "Mon @5",
        "anually", "Mon  12:00", "Mon ",
    ]
    static let zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"]
    /// Before the EU spring switch, before the EU autumn switch, a leap February, the US autumn switch.
    static let bases = [1_774_747_800 - 3_600, 1_792_888_200 - 3_600, 1_709_121_600, 1_793_511_000]

    @Test("normalized form and five next elapses match, in four zones and around DST switches", arguments: zones)
    func matchesSystemd(zone: String) async throws {
        try #require(CalendarOracle.path != nil, "systemd-analyze is not installed")
        var compared = 0
        defer { #expect(compared > 900, "only \(compared) elapses compared") }
        for expression in Self.expressions {
            let spec = try CalendarSpec(parsing: expression)
            for base in Self.bases {
                let oracle = try #require(try await CalendarOracle.run(expression, tz: zone, base: base, iterations: 5))
                #expect(spec.description == oracle.0, "\(expression)")
                // The local zone through TimeZoneContext, not setenv: other suites convert times meanwhile.
                let start = UInt64(base) * 1_000_000
                let times =
                    spec.utc || spec.timeZone != nil
                    ? (0..<5).reduce(into: [UInt64]()) { times, _ in
                        if let next = spec.nextElapse(after: times.last ?? start) { times.append(next) }
                    }
                    : TimeZoneContext.with(rule: zone) { CalendarDSTTests.iterate(spec, from: start, count: 5) }
                let ours = times.map { Int($0 / 1_000_000) }
                #expect(ours == oracle.1, "\(expression) in \(zone) after @\(base)")
                compared += oracle.1.count
            }
        }
    }

    static let rejected = [
        "", "Mon..", "Fri..Mon 9:00", "*-13-01", "*-*-32", "25:00", "*:60", "*:*:61", "Mon 9:00 Fri",
        "*-*-* 9:00:00:00", "*-*~29", "1969-01-01", "2200-01-01", "*:0/0", "foo", "12:", ":30", "Mo 9:00",
        "*-*-* 0/99:00", "1..", "*-*-* 9:00 Mars/Olympus",
        // `@` takes whole seconds only, and nothing may follow them; systemd trims nothing.
        "@1.5", "@5s500ms", "@5s", "@-1", "@", "@ ", "@5 ", "@5  UTC", "@0x10", "@1e3", "@+-5", "@- 5", "@5,6", "@5.",
        "@18446744073709551616", "@7258118400", "@9223372036854775808", " @5", "daily ", " daily", "12:00 ", " 12:00",
    ]

    @Test("rejected by both, with the expression in the error", arguments: rejected)
    func rejects(expression: String) async throws {
        #expect(throws: CalendarError.self) { try CalendarSpec(parsing: expression) }
        if CalendarOracle.path != nil, !expression.isEmpty {
            let oracle = try await CalendarOracle.run(expression, tz: "UTC", base: 1_767_225_600, iterations: 1)
            #expect(oracle == nil)
        }
    }

    @Test("round trip: the normalized form parses to the same spec")
    func roundTrip() throws {
        for expression in Self.expressions {
            let spec = try CalendarSpec(parsing: expression)
            #expect(try CalendarSpec(parsing: spec.description) == spec, "\(expression)")
        }
    }
}

@Suite("Calendar regressions, each named after the bug it caught")
struct CalendarRegressionTests {
    @Test(
        "repetitionThatCannotFireOnce: found by the differential corpus ('10/11-21,9 1..6:*:40/45' was accepted)",
        arguments: ["*:*:59/1", "*-12/1-01", "2199/1-01-01", "*:*:40/20", "*:*:40.5/19.5", "10/11-21,9 1..6:*:40/45"])
    func rejectsRepetitionThatCannotFire(expression: String) {
        #expect(throws: CalendarError.self) { try CalendarSpec(parsing: expression) }
    }

    @Test(
        "repetitionLongerThanItsRange: it normalizes to a plain value, as systemd prints it",
        arguments: [
            ("*:30..40/20", "*-*-* *:30:00"), ("*:30..59/20", "*-*-* *:30..50/20:00"), ("5..5:00", "*-*-* 05:00:00"),
        ])
    func normalizesShortRanges(expression: String, normalized: String) throws {
        #expect(try CalendarSpec(parsing: expression).description == normalized)
    }

    @Test(
        "seventhFractionalDigit: issue 32 ('00:00:00.4200005' was cut to .420000); it rounds wherever a fraction is",
        arguments: [
            ("00:00:00.4200005", "*-*-* 00:00:00.420001"), ("00:00:00.4200004", "*-*-* 00:00:00.420000"),
            ("00:00:00.42000049", "*-*-* 00:00:00.420000"), ("00:00:00.42000050", "*-*-* 00:00:00.420001"),
            ("00:00:00.0000005", "*-*-* 00:00:00.000001"), ("00:00:00.9999995", "*-*-* 00:00:01"),
            ("*:*:0/1.5000005", "*-*-* *:*:00/1.500001"), ("*:*:0/0.0000005", "*-*-* *:*:00/0.000001"),
            ("*:*:1.0000005..5.9999996", "*-*-* *:*:01.000001..05.000001"), ("*:*:0.9999995/2", "*-*-* *:*:01/2"),
            ("*:*:1.4999995,2.12345678901234", "*-*-* *:*:01.500000,02.123457"),
        ])
    func roundsBySeventhDigit(expression: String, normalized: String) throws {
        let spec = try CalendarSpec(parsing: expression)
        #expect(spec.description == normalized)
        #expect(try CalendarSpec(parsing: normalized) == spec)
    }

    @Test(
        "seventhFractionalDigit: rounding up to 60 s, or a repetition that rounds to 0, is rejected as systemd does",
        arguments: ["00:00:59.9999995", "*:*:0/0.0000004"])
    func rejectsWhatRoundingBreaks(expression: String) {
        #expect(throws: CalendarError.self) { try CalendarSpec(parsing: expression) }
    }

    @Test(
        "everySecondInAList: issue 32 ('*:4,30:0/1,3,5' printed its list; systemd prints * for seconds holding 0/1)",
        arguments: [
            ("*:4,30:0/1,3,5", "*-*-* *:04,30:*"), ("*:0:0/2,0/1", "*-*-* *:00:*"), ("*:0:0/1,3.5", "*-*-* *:00:*"),
            ("*:0:0,0/1", "*-*-* *:00:*"), ("*:0:0..3,0/1", "*-*-* *:00:*"), ("*:0:0/1.0000004", "*-*-* *:00:*"),
            // Not 0/1, or not seconds: printed as they are.
            ("*:0:1/1,3.5", "*-*-* *:00:01/1,03.500000"), ("*:0:0..59/1,3", "*-*-* *:00:00..59,03"),
            ("*:0:0/1.5,3", "*-*-* *:00:00/1.500000,03"), ("0/1:0:0", "*-*-* 00/1:00:00"),
            ("*:0/1,5:0", "*-*-* *:00/1,05:00"), ("*-1/1,3-1/1,5 0:0", "*-01/1,03-01/1,05 00:00:00"),
        ])
    func printsEverySecondAsStar(expression: String, normalized: String) throws {
        let spec = try CalendarSpec(parsing: expression)
        #expect(spec.description == normalized)
        #expect(try CalendarSpec(parsing: normalized).description == normalized)  // the canonical form is canonical
    }

    @Test("everySecondInAList: the entries the * hides still elapse (systemd-analyze: 03, 03.5, 04)")
    func hiddenSecondsStillElapse() throws {
        let spec = try CalendarSpec(parsing: "*:0:0/1,3.5 UTC")
        var t: UInt64 = 1_700_002_802_000_000  // 2023-11-14 23:00:02 UTC
        var elapses: [UInt64] = []
        for _ in 0..<3 {
            t = try #require(spec.nextElapse(after: t))
            elapses.append(t - 1_700_002_800_000_000)
        }
        #expect(elapses == [3_000_000, 3_500_000, 4_000_000])
    }

    @Test(
        "repetitionThatFits: the boundary cases systemd accepts",
        arguments: ["*:*:58/1", "*-11/1-01", "*-*-30/1", "*-*~28/1", "*-*~03/2"])
    func acceptsBoundaries(expression: String) {
        #expect(throws: Never.self) { try CalendarSpec(parsing: expression) }
    }
}
