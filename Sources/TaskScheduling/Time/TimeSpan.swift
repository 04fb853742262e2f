/// A duration in microseconds, parsed and printed exactly as systemd's `parse_sec()` / `format_timespan()`.
public struct TimeSpan: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds; `UInt64.max` is `infinity`.
    public var microseconds: UInt64

    public init(microseconds: UInt64) { self.microseconds = microseconds }

    public static let infinity = TimeSpan(microseconds: .max)
    public static let zero = TimeSpan(microseconds: 0)
    public static func seconds(_ s: UInt64) -> TimeSpan { TimeSpan(microseconds: s * usecPerSecond) }
    public static func milliseconds(_ ms: UInt64) -> TimeSpan { TimeSpan(microseconds: ms * 1_000) }

    public var isInfinite: Bool { microseconds == .max }

    public static func < (a: TimeSpan, b: TimeSpan) -> Bool { a.microseconds < b.microseconds }

    public static let usecPerSecond: UInt64 = 1_000_000
    public static let usecPerMinute: UInt64 = 60 * usecPerSecond
    public static let usecPerHour: UInt64 = 60 * usecPerMinute
    public static let usecPerDay: UInt64 = 24 * usecPerHour
    public static let usecPerWeek: UInt64 = 7 * usecPerDay
    public static let usecPerMonth: UInt64 = 2_629_800 * usecPerSecond  // 30.44 days
    public static let usecPerYear: UInt64 = 31_557_600 * usecPerSecond  // 365.25 days

    /// Unit suffixes in the order systemd's `extract_multiplier()` tries them (longest match first where it matters).
    static let parseUnits: [(String, UInt64)] = [
        ("seconds", usecPerSecond), ("second", usecPerSecond), ("sec", usecPerSecond), ("s", usecPerSecond),
        ("minutes", usecPerMinute), ("minute", usecPerMinute), ("min", usecPerMinute),
        ("months", usecPerMonth), ("month", usecPerMonth), ("M", usecPerMonth),
        ("msec", 1_000), ("ms", 1_000), ("m", usecPerMinute),
        ("hours", usecPerHour), ("hour", usecPerHour), ("hr", usecPerHour), ("h", usecPerHour),
        ("days", usecPerDay), ("day", usecPerDay), ("d", usecPerDay),
        ("weeks", usecPerWeek), ("week", usecPerWeek), ("w", usecPerWeek),
        ("years", usecPerYear), ("year", usecPerYear), ("y", usecPerYear),
        ("usec", 1), ("us", 1), ("\u{03BC}s", 1), ("\u{00B5}s", 1),
    ]

    /// Parses `text` as systemd does; a bare number is in `defaultUnit` microseconds (seconds for `*Sec=` keys).
    public init(parsing text: String, defaultUnit: UInt64 = TimeSpan.usecPerSecond) throws(TimeSpanError) {
        let s = Array(text.utf8)
        var i = 0
        func skipSpace() { while i < s.count, isSpace(s[i]) { i += 1 } }
        skipSpace()
        if s[i...].starts(with: Array("infinity".utf8)) {
            i += 8
            skipSpace()
            guard i == s.count else { throw TimeSpanError(text: text, reason: "trailing characters after 'infinity'") }
            self = .infinity
            return
        }
        var total: UInt64 = 0
        var something = false
        while true {
            skipSpace()
            if i == s.count {
                guard something else { throw TimeSpanError(text: text, reason: "empty time span") }
                break
            }
            let negativeSpan = TimeSpanError(text: text, reason: "negative time span", outOfRange: true)
            if s[i] == UInt8(ascii: "-") { throw negativeSpan }
            // strtoll(): C white space, a sign, digits, at most Int64.max; without digits it reads nothing.
            var j = i
            while j < s.count, isCSpace(s[j]) { j += 1 }
            let negative = j < s.count && s[j] == UInt8(ascii: "-")
            if j < s.count, negative || s[j] == UInt8(ascii: "+") { j += 1 }
            let digitsStart = j
            var whole: UInt64 = 0
            var tooLarge = false
            while j < s.count, isDigit(s[j]) {
                let (m, o1) = whole.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(UInt64(s[j] - 48))
                if o1 || o2 || a > UInt64(Int64.max) + (negative ? 1 : 0) { tooLarge = true }
                whole = a
                j += 1
            }
            if tooLarge { throw TimeSpanError(text: text, reason: "number out of range", outOfRange: true) }
            if j == digitsStart { j = i }  // nothing converted: strtoll() ends where it began
            if negative && whole > 0 { throw negativeSpan }
            var fraction: ArraySlice<UInt8> = []
            let hasDot = j < s.count && s[j] == UInt8(ascii: ".")
            if j == i && !hasDot {
                throw TimeSpanError(text: text, reason: "expected a number at '\(rest(s, i))'")
            }
            if hasDot {
                let f = j + 1
                var k = f
                while k < s.count, isDigit(s[k]) { k += 1 }
                fraction = s[f..<k]
                j = k
            }
            // The unit may follow after white space.
            var u = j
            while u < s.count, isSpace(s[u]) { u += 1 }
            var multiplier = defaultUnit
            var afterUnit = u
            for (suffix, usec) in Self.parseUnits where s[u...].starts(with: Array(suffix.utf8)) {
                multiplier = usec
                afterUnit = u + suffix.utf8.count
                break
            }
            if afterUnit == u { afterUnit = j }  // no unit: continue right after the number
            if afterUnit == j && j < s.count && !isSpace(s[j]) {
                throw TimeSpanError(text: text, reason: "unknown unit at '\(rest(s, j))'")
            }
            // Every addition stays below infinity (UInt64.max), as systemd's checks keep it.
            let outOfRange = TimeSpanError(text: text, reason: "time span out of range", outOfRange: true)
            if multiplier > 0, whole >= UInt64.max / multiplier { throw outOfRange }
            func add(_ k: UInt64) throws(TimeSpanError) {
                guard k < UInt64.max - total else { throw outOfRange }
                total += k
            }
            try add(whole * multiplier)
            if hasDot {
                // One digit at a time: what falls below a microsecond is dropped, not rounded.
                var m = multiplier / 10
                for d in fraction {
                    try add(UInt64(d - 48) * m)
                    m /= 10
                }
                if fraction.isEmpty { throw TimeSpanError(text: text, reason: "expected digits after '.'") }
            }
            something = true
            i = afterUnit
        }
        self.microseconds = total
    }

    /// The canonical text, as `systemd-analyze timespan` prints it on its "Human:" line.
    public var description: String { format(accuracy: 1) }

    /// systemd's `format_timespan(t, accuracy)`.
    public func format(accuracy: UInt64) -> String {
        if isInfinite { return "infinity" }
        var t = microseconds
        if t == 0 { return "0" }
        let table: [(String, UInt64)] = [
            ("y", Self.usecPerYear), ("month", Self.usecPerMonth), ("w", Self.usecPerWeek),
            ("d", Self.usecPerDay), ("h", Self.usecPerHour), ("min", Self.usecPerMinute),
            ("s", Self.usecPerSecond), ("ms", 1_000), ("us", 1),
        ]
        var parts: [String] = []
        for (suffix, unit) in table {
            if t == 0 { break }
            if t < accuracy && !parts.isEmpty { break }
            if t < unit { continue }
            let a = t / unit
            var b = t % unit
            if t < Self.usecPerMinute && b > 0 {
                var digits = 0
                var cc = unit
                while cc > 1 { digits += 1; cc /= 10 }
                cc = accuracy
                while cc > 1 { b /= 10; digits -= 1; cc /= 10 }
                if digits > 0 {
                    let digitsText = String(b)
                    let frac = String(repeating: "0", count: max(0, digits - digitsText.count)) + digitsText
                    parts.append("\(a).\(frac)\(suffix)")
                    t = 0
                    continue
                }
            }
            parts.append("\(a)\(suffix)")
            t = b
        }
        return parts.joined(separator: " ")
    }
}

/// Why a time span did not parse.
public struct TimeSpanError: Error, Equatable, Sendable, CustomStringConvertible {
    public var text: String
    public var reason: String
    /// systemd's ERANGE (negative, or too large) rather than EINVAL (not a time span at all).
    public var outOfRange = false
    public var description: String { "invalid time span '\(text)': \(reason)" }
}

/// systemd's WHITESPACE, which separates the parts of a span.
private func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }
/// C's isspace(), which strtoll() skips: WHITESPACE, vertical tab and form feed.
private func isCSpace(_ c: UInt8) -> Bool { isSpace(c) || c == 11 || c == 12 }
private func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
private func rest(_ s: [UInt8], _ i: Int) -> String { String(decoding: s[i...], as: UTF8.self) }
