import Foundation
import Testing

@testable import TaskScheduling

@Suite("Calendar next elapses across DST changes, negative DST included")
struct CalendarDSTTests {
    /// `zone|base|expression|four next elapses`, as `TZ=zone systemd-analyze calendar expression
    /// --base-time base --iterations 4` printed them (systemd 252.39, which has the negative-DST fix).
    /// The POSIX rule has Ireland's March change, and its October change an hour before Dublin's.
    static let systemdTable = """
        Europe/Dublin|2025-03-29 22:00:00 UTC|hourly|Sat 2025-03-29 23:00:00 GMT|Sun 2025-03-30 00:00:00 GMT|Sun 2025-03-30 02:00:00 IST|Sun 2025-03-30 03:00:00 IST
        Europe/Dublin|2025-03-29 22:00:00 UTC|daily|Sun 2025-03-30 00:00:00 GMT|Mon 2025-03-31 00:00:00 IST|Tue 2025-04-01 00:00:00 IST|Wed 2025-04-02 00:00:00 IST
        Europe/Dublin|2025-03-29 22:00:00 UTC|*:30|Sat 2025-03-29 22:30:00 GMT|Sat 2025-03-29 23:30:00 GMT|Sun 2025-03-30 00:30:00 GMT|Sun 2025-03-30 02:30:00 IST
        Europe/Dublin|2025-03-30 00:00:00 UTC|hourly|Sun 2025-03-30 02:00:00 IST|Sun 2025-03-30 03:00:00 IST|Sun 2025-03-30 04:00:00 IST|Sun 2025-03-30 05:00:00 IST
        Europe/Dublin|2025-03-30 00:00:00 UTC|daily|Mon 2025-03-31 00:00:00 IST|Tue 2025-04-01 00:00:00 IST|Wed 2025-04-02 00:00:00 IST|Thu 2025-04-03 00:00:00 IST
        Europe/Dublin|2025-03-30 00:00:00 UTC|*:30|Sun 2025-03-30 00:30:00 GMT|Sun 2025-03-30 02:30:00 IST|Sun 2025-03-30 03:30:00 IST|Sun 2025-03-30 04:30:00 IST
        Europe/Dublin|2025-03-30 00:00:00 UTC|*:0/20|Sun 2025-03-30 00:20:00 GMT|Sun 2025-03-30 00:40:00 GMT|Sun 2025-03-30 02:00:00 IST|Sun 2025-03-30 02:20:00 IST
        Europe/Dublin|2025-03-30 00:00:00 UTC|Sun *-*-* 01:00:00|Sun 2025-04-06 01:00:00 IST|Sun 2025-04-13 01:00:00 IST|Sun 2025-04-20 01:00:00 IST|Sun 2025-04-27 01:00:00 IST
        Europe/Dublin|2025-10-25 23:30:00 UTC|hourly|Sun 2025-10-26 01:00:00 IST|Sun 2025-10-26 02:00:00 GMT|Sun 2025-10-26 03:00:00 GMT|Sun 2025-10-26 04:00:00 GMT
        Europe/Dublin|2025-10-25 23:30:00 UTC|*:0/20|Sun 2025-10-26 00:40:00 IST|Sun 2025-10-26 01:00:00 IST|Sun 2025-10-26 01:20:00 IST|Sun 2025-10-26 01:40:00 IST
        Europe/Dublin|2025-10-25 23:30:00 UTC|Sun *-*-* 01:00:00|Sun 2025-10-26 01:00:00 IST|Sun 2025-11-02 01:00:00 GMT|Sun 2025-11-09 01:00:00 GMT|Sun 2025-11-16 01:00:00 GMT
        Europe/Dublin|2026-03-29 00:30:00 UTC|hourly|Sun 2026-03-29 02:00:00 IST|Sun 2026-03-29 03:00:00 IST|Sun 2026-03-29 04:00:00 IST|Sun 2026-03-29 05:00:00 IST
        Europe/Dublin|2026-03-29 00:30:00 UTC|daily|Mon 2026-03-30 00:00:00 IST|Tue 2026-03-31 00:00:00 IST|Wed 2026-04-01 00:00:00 IST|Thu 2026-04-02 00:00:00 IST
        Europe/Dublin|2026-03-29 00:30:00 UTC|*:0/20|Sun 2026-03-29 00:40:00 GMT|Sun 2026-03-29 02:00:00 IST|Sun 2026-03-29 02:20:00 IST|Sun 2026-03-29 02:40:00 IST
        Europe/Dublin|2026-10-25 00:00:00 UTC|hourly|Sun 2026-10-25 02:00:00 GMT|Sun 2026-10-25 03:00:00 GMT|Sun 2026-10-25 04:00:00 GMT|Sun 2026-10-25 05:00:00 GMT
        Europe/Dublin|2026-10-25 00:00:00 UTC|*:30|Sun 2026-10-25 01:30:00 IST|Sun 2026-10-25 02:30:00 GMT|Sun 2026-10-25 03:30:00 GMT|Sun 2026-10-25 04:30:00 GMT
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2025-03-29 22:00:00 UTC|hourly|Sat 2025-03-29 23:00:00 GMT|Sun 2025-03-30 00:00:00 GMT|Sun 2025-03-30 02:00:00 IST|Sun 2025-03-30 03:00:00 IST
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2025-03-29 22:00:00 UTC|daily|Sun 2025-03-30 00:00:00 GMT|Mon 2025-03-31 00:00:00 IST|Tue 2025-04-01 00:00:00 IST|Wed 2025-04-02 00:00:00 IST
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2025-03-29 22:00:00 UTC|*:30|Sat 2025-03-29 22:30:00 GMT|Sat 2025-03-29 23:30:00 GMT|Sun 2025-03-30 00:30:00 GMT|Sun 2025-03-30 02:30:00 IST
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2025-03-30 00:00:00 UTC|hourly|Sun 2025-03-30 02:00:00 IST|Sun 2025-03-30 03:00:00 IST|Sun 2025-03-30 04:00:00 IST|Sun 2025-03-30 05:00:00 IST
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2025-03-30 00:00:00 UTC|*:0/20|Sun 2025-03-30 00:20:00 GMT|Sun 2025-03-30 00:40:00 GMT|Sun 2025-03-30 02:00:00 IST|Sun 2025-03-30 02:20:00 IST
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2025-10-25 23:30:00 UTC|hourly|Sun 2025-10-26 01:00:00 GMT|Sun 2025-10-26 02:00:00 GMT|Sun 2025-10-26 03:00:00 GMT|Sun 2025-10-26 04:00:00 GMT
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2025-10-25 23:30:00 UTC|*:0/20|Sun 2025-10-26 00:40:00 IST|Sun 2025-10-26 01:00:00 GMT|Sun 2025-10-26 01:20:00 GMT|Sun 2025-10-26 01:40:00 GMT
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2026-03-29 00:30:00 UTC|hourly|Sun 2026-03-29 02:00:00 IST|Sun 2026-03-29 03:00:00 IST|Sun 2026-03-29 04:00:00 IST|Sun 2026-03-29 05:00:00 IST
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2026-03-29 00:30:00 UTC|*:30|Sun 2026-03-29 02:30:00 IST|Sun 2026-03-29 03:30:00 IST|Sun 2026-03-29 04:30:00 IST|Sun 2026-03-29 05:30:00 IST
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2026-10-25 00:00:00 UTC|*:30|Sun 2026-10-25 00:30:00 GMT|Sun 2026-10-25 01:30:00 GMT|Sun 2026-10-25 02:30:00 GMT|Sun 2026-10-25 03:30:00 GMT
        IST-1GMT-0,M10.5.0/1,M3.5.0/1|2026-10-25 00:00:00 UTC|Sun *-*-* 01:00:00|Sun 2026-10-25 01:00:00 GMT|Sun 2026-11-01 01:00:00 GMT|Sun 2026-11-08 01:00:00 GMT|Sun 2026-11-15 01:00:00 GMT
        """.split(separator: "\n").map { $0.split(separator: "|").map(String.init) }

    @Test("Irish rules: the next elapses systemd-analyze prints, never the base again", arguments: systemdTable)
    func irishRules(row: [String]) throws {
        let (zone, base, expression, expected) = (row[0], try Self.epoch(row[1]), row[2], Array(row[3...]))
        let spec = try CalendarSpec(parsing: expression)
        let ours = TimeZoneContext.with(rule: zone) { () -> [String] in
            Self.iterate(spec, from: base, count: expected.count).map(Self.local)
        }
        #expect(ours == expected, "\(expression) in \(zone) after \(row[1])")
        if zone.hasPrefix("Europe/") {
            // The same through the public API, with the zone named in the expression.
            let named = try CalendarSpec(parsing: "\(expression) \(zone)")
            var times: [UInt64] = []
            var t = base
            while times.count < expected.count, let next = named.nextElapse(after: t) {
                times.append(next)
                t = next
            }
            #expect(TimeZoneContext.with(rule: zone) { times.map(Self.local) } == expected, "\(expression) \(zone)")
        }
    }

    @Test(
        "where systemd gives up (its search loops: 'Infinite loop in calendar calculation'), the elapses are found",
        arguments: [
            ("2/4:36", "2025-03-29 23:30:00 UTC", ["Sun 2025-03-30 02:36:00 IST", "Sun 2025-03-30 06:36:00 IST"]),
            ("5/12:3..45", "2025-03-29 23:30:00 UTC", ["Sun 2025-03-30 05:03:00 IST", "Sun 2025-03-30 05:04:00 IST"]),
            // Starting again from later instants alone would skip 02:00 here.
            ("2/6:0", "2025-03-29 21:30:00 UTC", ["Sun 2025-03-30 02:00:00 IST", "Sun 2025-03-30 08:00:00 IST"]),
        ])
    func systemdGivesUp(expression: String, base: String, expected: [String]) throws {
        // The hour repetition runs past 23 (02/4 gives 26 on the 29th); 26:00 normalizes to 02:00 IST, whose
        // DST flag then reads the reset 00:00 as 23:00 GMT the day before, and round it goes.
        let (spec, start) = (try CalendarSpec(parsing: expression), try Self.epoch(base))
        let times = TimeZoneContext.with(rule: "Europe/Dublin") {
            Self.iterate(spec, from: start, count: 2).map(Self.local)
        }
        #expect(times == expected)
    }

    // MARK: Property: every next elapse is after its base, around every DST change

    static let expressions = [
        "hourly", "daily", "minutely", "*:30", "*:0/15", "Sun *-*-* 01:00:00", "*-*-* 00..03:*:00", "01:30", "02:30",
        "*:*:30.5", "weekly", "monthly", "2/4:36", "2/6:0",
    ]
    /// Always sampled: negative DST (Dublin, Casablanca), 30-minute DST (Lord Howe), the date line (Apia),
    /// changes at midnight (Santiago, Tehran until 2022), and the common ones.
    static let mustZones = [
        "Europe/Dublin", "Europe/London", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
        "Australia/Sydney", "Africa/Casablanca", "Pacific/Apia", "America/Santiago", "Asia/Tehran",
    ]
    /// POSIX rules: Irish (negative DST), central European, US eastern, a 30-minute change, and a
    /// negative-DST rule whose change is at 03:00.
    static let posixRules = [
        "IST-1GMT-0,M10.5.0/1,M3.5.0/1", "CET-1CEST,M3.5.0,M10.5.0/3", "EST5EDT,M3.2.0,M11.1.0",
        "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "<+01>-1<+00>0,M2.3.0/3,M4.1.0/2",
    ]

    /// Every zone under /usr/share/zoneinfo (links and posix/, right/ left out; the ten above first), then
    /// the POSIX rules.
    static let propertyZones: [String] = {
        let root = "/usr/share/zoneinfo/"
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        let names = files.filter { name in
            guard !name.hasPrefix("posix/"), !name.hasPrefix("right/"), TimeZoneContext.isValid(name) else {
                return false
            }
            let isLink = (try? FileManager.default.destinationOfSymbolicLink(atPath: root + name)) != nil
            return !isLink && !mustZones.contains(name)
        }.sorted()
        return mustZones + names + posixRules
    }()

    @Test("each next elapse is after its base and five iterate upwards, around every DST change of 2024–2026")
    func alwaysAfterTheBase() async throws {
        let specs = try Self.expressions.map { try CalendarSpec(parsing: $0) }
        // A minute or more of CPU: on a thread of its own, not one of the cooperative pool's two.
        let (zonesWithChanges, searches, failures) = try await offThePool { Self.searchAroundChanges(specs) }
        print("CalendarDSTTests: \(zonesWithChanges) zones with DST changes, \(searches) searches")
        #expect(zonesWithChanges >= 100, "only \(zonesWithChanges) zones with DST changes were found")
        #expect(Self.propertyZones.contains("Europe/Dublin"))
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(10).joined(separator: "; "))")
    }

    /// Five elapses of each spec after bases around every offset change of 2024–2026 in every zone:
    /// the zones with changes, the searches made, and each base whose elapses were not all after it.
    static func searchAroundChanges(_ specs: [CalendarSpec]) -> (Int, Int, [String]) {
        var zonesWithChanges = 0
        var searches = 0
        var failures: [String] = []
        for zone in propertyZones {
            TimeZoneContext.with(rule: zone) {
                let changes = offsetChanges(from: 1_704_067_200, to: 1_798_761_600)  // 2024 to 2026
                if !changes.isEmpty { zonesWithChanges += 1 }
                for change in changes {
                    let bases =
                        stride(from: -7_200, through: 7_200, by: 900).map { change + $0 } + [change - 1, change + 1]
                    for base in bases {
                        for (expression, spec) in zip(expressions, specs) {
                            let start = UInt64(base) * 1_000_000
                            let times = iterate(spec, from: start, count: 5)
                            searches += 5
                            let increasing = zip([start] + times, times).allSatisfy { $0 < $1 }
                            if times.count != 5 || !increasing {
                                failures.append(
                                    "\(expression) in \(zone) after @\(base): \(times.map { $0 / 1_000_000 })")
                            }
                        }
                    }
                }
            }
        }
        return (zonesWithChanges, searches, failures)
    }

    // MARK: Helpers

    /// Up to `count` next elapses after `base`, each after the one before (`TimeZoneContext` held).
    static func iterate(_ spec: CalendarSpec, from base: UInt64, count: Int) -> [UInt64] {
        var times: [UInt64] = []
        var t = base
        while times.count < count, let next = spec.nextElapseInCurrentZone(after: t) {
            times.append(next)
            t = next
        }
        return times
    }

    /// Every instant in `[from, to)` (epoch seconds) where the zone libc has now changes its UTC offset.
    static func offsetChanges(from: Int, to: Int) -> [Int] {
        func offset(_ t: Int) -> Int {
            var seconds = time_t(t)
            var parts = tm()
            localtime_r(&seconds, &parts)
            return parts.tm_gmtoff
        }
        var changes: [Int] = []
        var t = from
        while t < to {
            let next = t + 86_400
            if offset(next) != offset(t) {
                var (low, high) = (t, next)  // the change is in (low, high]
                while high - low > 1 {
                    let middle = (low + high) / 2
                    if offset(middle) == offset(t) { low = middle } else { high = middle }
                }
                changes.append(high)
            }
            t = next
        }
        return changes
    }

    /// `Sat 2025-03-29 23:00:00 GMT`, as systemd-analyze prints a time in the zone libc has now.
    static func local(_ usec: UInt64) -> String {
        var seconds = time_t(usec / 1_000_000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, "%a %Y-%m-%d %H:%M:%S %Z", &parts)
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `2025-03-29 22:00:00 UTC` in µs.
    static func epoch(_ text: String) throws -> UInt64 {
        let f = text.split(whereSeparator: { " -:".contains($0) }).prefix(6).compactMap { Int32($0) }
        try #require(f.count == 6)
        var parts = tm(
            tm_sec: f[5], tm_min: f[4], tm_hour: f[3], tm_mday: f[2], tm_mon: f[1] - 1, tm_year: f[0] - 1900,
            tm_wday: 0, tm_yday: 0, tm_isdst: 0, tm_gmtoff: 0, tm_zone: nil)
        return UInt64(timegm(&parts)) * 1_000_000
    }
}
