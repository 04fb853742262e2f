/// A cursor over a time span's text that reads it as systemd's `parse_sec()` does: white space,
/// then parts, each a number as `strtoll()` reads it, a fraction and a unit of `TimeSpan.parseUnits`.
/// `TimeSpan(parsing:)` adds the parts up.
struct TimeSpanScanner {
    /// One `<number>[.<fraction>][ ]<unit>` of a span, as read: nothing is multiplied yet.
    struct Part {
        var whole: UInt64
        /// The digits after a dot (possibly none), or nil without a dot.
        var fraction: ArraySlice<UInt8>?
        /// The unit's microseconds (the default unit without one).
        var multiplier: UInt64
    }

    private let text: String
    private let s: [UInt8]
    private var i = 0

    init(_ text: String) {
        self.text = text
        s = Array(text.utf8)
    }

    var atEnd: Bool { i == s.count }

    /// Skips systemd's WHITESPACE.
    mutating func skipSpace() { while i < s.count, Self.isSpace(s[i]) { i += 1 } }

    /// Skips `word` if the text goes on with it; whether it did.
    mutating func skip(_ word: [UInt8]) -> Bool {
        guard s[i...].starts(with: word) else { return false }
        i += word.count
        return true
    }

    /// Reads the part that starts here (not at white space); a part with no unit is in `defaultUnit`.
    mutating func part(defaultUnit: UInt64) throws(TimeSpanError) -> Part {
        if s[i] == UInt8(ascii: "-") { throw negativeSpan }
        let (whole, numberEnd) = try integer(from: i)
        var j = numberEnd
        let hasDot = j < s.count && s[j] == UInt8(ascii: ".")
        if j == i && !hasDot { throw TimeSpanError(text: text, reason: "expected a number at '\(rest(i))'") }
        var fraction: ArraySlice<UInt8>?
        if hasDot {
            var k = j + 1
            while k < s.count, Self.isDigit(s[k]) { k += 1 }
            fraction = s[(j + 1)..<k]
            j = k
        }
        let (multiplier, end) = try unit(after: j, defaultUnit: defaultUnit)
        i = end
        return Part(whole: whole, fraction: fraction, multiplier: multiplier)
    }

    /// `strtoll()` from `start`: C white space, a sign, digits, at most Int64.max; the magnitude
    /// and where it ended (at `start` when there were no digits: it reads nothing then).
    private func integer(from start: Int) throws(TimeSpanError) -> (UInt64, Int) {
        var j = start
        while j < s.count, Self.isCSpace(s[j]) { j += 1 }
        let negative = j < s.count && s[j] == UInt8(ascii: "-")
        if j < s.count, negative || s[j] == UInt8(ascii: "+") { j += 1 }
        let digitsStart = j
        var whole: UInt64 = 0
        var tooLarge = false
        while j < s.count, Self.isDigit(s[j]) {
            let (m, o1) = whole.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(s[j] - 48))
            if o1 || o2 || a > UInt64(Int64.max) + (negative ? 1 : 0) { tooLarge = true }
            whole = a
            j += 1
        }
        if tooLarge { throw TimeSpanError(text: text, reason: "number out of range", outOfRange: true) }
        if j == digitsStart { return (0, start) }
        if negative && whole > 0 { throw negativeSpan }
        return (whole, j)
    }

    /// The unit after a number that ends at `end` (white space may come between): its
    /// microseconds and where it ends. Without one, `defaultUnit`, and the number must end the part.
    private func unit(after end: Int, defaultUnit: UInt64) throws(TimeSpanError) -> (UInt64, Int) {
        var u = end
        while u < s.count, Self.isSpace(s[u]) { u += 1 }
        for (suffix, usec) in Self.units where s[u...].starts(with: suffix) {
            return (usec, u + suffix.count)
        }
        if end < s.count && !Self.isSpace(s[end]) {
            throw TimeSpanError(text: text, reason: "unknown unit at '\(rest(end))'")
        }
        return (defaultUnit, end)
    }

    /// `TimeSpan.parseUnits` as bytes, in its order.
    private static let units = TimeSpan.parseUnits.map { (Array($0.0.utf8), $0.1) }

    private var negativeSpan: TimeSpanError {
        TimeSpanError(text: text, reason: "negative time span", outOfRange: true)
    }

    private func rest(_ from: Int) -> String { String(decoding: s[from...], as: UTF8.self) }

    /// systemd's WHITESPACE, which separates the parts of a span.
    private static func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }
    /// C's isspace(), which strtoll() skips: WHITESPACE, vertical tab and form feed.
    private static func isCSpace(_ c: UInt8) -> Bool { isSpace(c) || c == 11 || c == 12 }
    private static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
}
