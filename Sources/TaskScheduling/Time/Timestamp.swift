#if canImport(Glibc)
    import Glibc
#endif

/// Timestamps as systemd's `parse_timestamp()` reads its common forms and `format_timestamp()` /
/// `format_timestamp_relative()` print them. Values are CLOCK_REALTIME microseconds.
public enum Timestamp {
    /// `@EPOCH[.frac]`, `now`, or `YYYY-MM-DD [HH:MM[:SS[.frac]]] [UTC|IANA zone]` (local time otherwise).
    public static func parse(_ text: String, now: UInt64) throws(TimestampError) -> UInt64 {
        let trimmed = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let first = trimmed.first else { throw TimestampError(text: text, reason: "empty timestamp") }
        if trimmed.count == 1, first == "now" { return now }
        if trimmed.count == 1, first.hasPrefix("@") {
            guard let span = try? TimeSpan(parsing: String(first.dropFirst()), defaultUnit: 1_000_000), !span.isInfinite
            else { throw TimestampError(text: text, reason: "invalid number of seconds after '@'") }
            return span.microseconds
        }
        var words = trimmed
        var zone: String? = nil
        var utc = false
        if words.count > 1, let last = words.last {
            if last.uppercased() == "UTC" {
                utc = true
                words.removeLast()
            } else if TimeZoneContext.isValid(last) {
                zone = last
                words.removeLast()
            }
        }
        guard words.count <= 2 else { throw TimestampError(text: text, reason: "expected 'YYYY-MM-DD HH:MM:SS'") }
        let date = words[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard date.count == 3, let y = date[0], let m = date[1], let d = date[2], (1...12).contains(m),
            (1...31).contains(d)
        else { throw TimestampError(text: text, reason: "invalid date '\(words[0])'") }
        var hour = 0
        var minute = 0
        var second = 0
        var micro = 0
        if words.count == 2 {
            var clock = words[1].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard clock.count == 2 || clock.count == 3 else {
                throw TimestampError(text: text, reason: "invalid time '\(words[1])'")
            }
            if clock.count == 3, let dot = clock[2].firstIndex(of: ".") {
                let fraction = String(clock[2][clock[2].index(after: dot)...])
                guard !fraction.isEmpty, fraction.allSatisfy(\.isNumber) else {
                    throw TimestampError(text: text, reason: "invalid fraction of a second")
                }
                micro = Int(String((fraction + "000000").prefix(6)))!
                clock[2] = String(clock[2][..<dot])
            }
            let values = clock.map { Int($0) }
            guard let h = values[0], let mi = values[1], (0...23).contains(h), (0...59).contains(mi) else {
                throw TimestampError(text: text, reason: "invalid time '\(words[1])'")
            }
            hour = h
            minute = mi
            if values.count == 3 {
                guard let s = values[2], (0...60).contains(s) else {
                    throw TimestampError(text: text, reason: "invalid seconds")
                }
                second = s
            }
        }
        var parts = tm()
        parts.tm_year = Int32(y - 1900)
        parts.tm_mon = Int32(m - 1)
        parts.tm_mday = Int32(d)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        parts.tm_isdst = -1
        let seconds = utc ? Int(timegm(&parts)) : TimeZoneContext.with(zone) { Int(mktime(&parts)) }
        guard seconds >= 0 else { throw TimestampError(text: text, reason: "before 1970") }
        return UInt64(seconds) * 1_000_000 + UInt64(micro)
    }

    /// `Sat 2026-11-21 18:30:00 CET`: local time (or `zone`), as `format_timestamp()` prints it.
    public static func format(_ usec: UInt64, utc: Bool = false) -> String {
        var seconds = time_t(usec / 1_000_000)
        return TimeZoneContext.with(nil) {
            var parts = tm()
            if utc { gmtime_r(&seconds, &parts) } else { localtime_r(&seconds, &parts) }
            var buffer = [CChar](repeating: 0, count: 64)
            let n = strftime(
                &buffer, buffer.count, utc ? "%a %Y-%m-%d %H:%M:%S UTC" : "%a %Y-%m-%d %H:%M:%S %Z", &parts)
            return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// `2026-11-21 17:30:00.250000 UTC`: the `OnCalendar=` expression that elapses at `usec` only.
    public static func calendarExpression(_ usec: UInt64) -> String {
        var seconds = time_t(usec / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        let micro = String(usec % 1_000_000)
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) + "."
            + String(repeating: "0", count: 6 - micro.count) + micro + " UTC"
    }

    /// True when the local zone is UTC all year (no offset in January or July).
    public static var localZoneIsUTC: Bool {
        TimeZoneContext.with(nil) {
            [0, 15_638_400].allSatisfy { offset in
                var t = time_t(1_767_225_600 + offset)
                var parts = tm()
                localtime_r(&t, &parts)
                return parts.tm_gmtoff == 0
            }
        }
    }

    /// `12min left`, `7 months 23 days ago`, as `format_timestamp_relative()` prints the distance.
    public static func relative(_ usec: UInt64, now: UInt64) -> String {
        let (d, suffix) = usec > now ? (usec - now, "left") : (now - usec, "ago")
        let second: UInt64 = 1_000_000
        let minute = 60 * second
        let hour = 60 * minute
        let day = 24 * hour
        let week = 7 * day
        let month = TimeSpan.usecPerMonth
        let year = TimeSpan.usecPerYear
        func plural(_ n: UInt64, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
        switch d {
        case year...:
            return "\(plural(d / year, "year", "years")) \(plural(d % year / month, "month", "months")) \(suffix)"
        case month...:
            return "\(plural(d / month, "month", "months")) \(plural(d % month / day, "day", "days")) \(suffix)"
        case week...: return "\(plural(d / week, "week", "weeks")) \(plural(d % week / day, "day", "days")) \(suffix)"
        case (2 * day)...: return "\(d / day) days \(suffix)"
        case (25 * hour)...: return "1 day \((d - day) / hour)h \(suffix)"
        case (6 * hour)...: return "\(d / hour)h \(suffix)"
        case hour...: return "\(d / hour)h \(d % hour / minute)min \(suffix)"
        case (5 * minute)...: return "\(d / minute)min \(suffix)"
        case minute...: return "\(d / minute)min \(d % minute / second)s \(suffix)"
        case second...: return "\(d / second)s \(suffix)"
        case 1_000...: return "\(d / 1_000)ms \(suffix)"
        case 1...: return "\(d)us \(suffix)"
        default: return "now"
        }
    }
}

/// A timestamp that did not parse.
public struct TimestampError: Error, Hashable, Sendable, CustomStringConvertible {
    public var text: String
    public var reason: String
    public var description: String { "invalid timestamp '\(text)': \(reason)" }
}
