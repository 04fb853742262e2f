#if canImport(Glibc)
    import Glibc
#endif

/// Parses calendar expressions the way systemd 252's `calendar_spec_from_string()` does:
/// shorthands, an optional weekday list, a date, a time, and a trailing `UTC` or time-zone name.
enum CalendarSpecParser {
    static let shorthands: [String: String] = [
        "minutely": "*-*-* *:*:00", "hourly": "*-*-* *:00:00", "daily": "*-*-* 00:00:00",
        "monthly": "*-*-01 00:00:00", "weekly": "Mon *-*-* 00:00:00", "yearly": "*-01-01 00:00:00",
        "annually": "*-01-01 00:00:00", "anually": "*-01-01 00:00:00", "quarterly": "*-01,04,07,10-01 00:00:00",
        "semiannually": "*-01,07-01 00:00:00", "semi-annually": "*-01,07-01 00:00:00",
        "biannually": "*-01,07-01 00:00:00", "bi-annually": "*-01,07-01 00:00:00",
    ]

    static let weekdayNames: [(String, Int)] = [
        ("Monday", 0), ("Mon", 0), ("Tuesday", 1), ("Tue", 1), ("Wednesday", 2), ("Wed", 2),
        ("Thursday", 3), ("Thu", 3), ("Friday", 4), ("Fri", 4), ("Saturday", 5), ("Sat", 5),
        ("Sunday", 6), ("Sun", 6),
    ]

    struct Failure: Error { var reason: String }

    static func parse(
        _ expression: String, isTimeZone: (String) -> Bool, localZoneNames: [String] = ["", ""]
    ) throws(CalendarError) -> CalendarSpec {
        var spec = CalendarSpec()
        // Not trimmed, as systemd does not trim (a unit file's value arrives trimmed): "daily " is invalid.
        var text = Substring(expression)
        if text.count > 4, text.suffix(4).lowercased() == " utc" {
            spec.utc = true
            text = text.dropLast(4)
        } else if let j = (0..<2).first(where: { j in
            let name = localZoneNames[j]
            return !name.isEmpty && text.count > name.count
                && text.suffix(name.count + 1).lowercased() == " " + name.lowercased()
        }) {
            // The local zone's own abbreviation wins over a zone file of the same name (systemd's order).
            spec.dst = (Int32(j), localZoneNames[j])
            text = text.dropLast(localZoneNames[j].count + 1)
        } else if let space = text.lastIndex(of: " "), isTimeZone(String(text[text.index(after: space)...])) {
            spec.timeZone = String(text[text.index(after: space)...])
            text = text[..<space]
        }
        guard !text.isEmpty else { throw CalendarError(expression: expression, reason: "empty expression") }
        var body = Array(String(text).utf8)
        if let expanded = shorthands[String(text).lowercased()] { body = Array(expanded.utf8) }
        var p = 0
        do {
            try parseWeekdays(body, &p, &spec)
            if try !parseDate(body, &p, &spec) { try parseTime(body, &p, &spec) }
            guard p == body.count else {
                throw Failure(reason: "unexpected '\(String(decoding: body[p...], as: UTF8.self))'")
            }
        } catch let failure as Failure {
            throw CalendarError(expression: expression, reason: failure.reason)
        } catch {
            throw CalendarError(expression: expression, reason: "\(error)")
        }
        normalize(&spec)
        if let reason = invalidity(spec) { throw CalendarError(expression: expression, reason: reason) }
        return spec
    }

    // MARK: Parts

    static func parseWeekdays(_ s: [UInt8], _ p: inout Int, _ spec: inout CalendarSpec) throws {
        var bits = 0
        var rangeStart = -1
        var first = true
        while true {
            var matched: (Int, Int)?
            for (name, nr) in weekdayNames where hasPrefix(s, p, name) {
                matched = (name.utf8.count, nr)
                break
            }
            guard let (length, nr) = matched else {
                if first { return }
                throw Failure(reason: "expected a weekday at '\(rest(s, p))'")
            }
            let after = p + length
            guard
                after == s.count
                    || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: " ")].contains(s[after])
            else { throw Failure(reason: "invalid weekday at '\(rest(s, p))'") }
            bits |= 1 << nr
            if rangeStart >= 0 {
                guard rangeStart <= nr else { throw Failure(reason: "weekday range runs backwards at '\(rest(s, p))'") }
                for j in (rangeStart + 1)..<max(rangeStart + 1, nr) { bits |= 1 << j }
            }
            p = after
            spec.weekdays = bits
            if p == s.count { return }
            if s[p] == UInt8(ascii: " ") {
                while p < s.count, s[p] == UInt8(ascii: " ") { p += 1 }
                return
            }
            if s[p] == UInt8(ascii: ".") {
                guard rangeStart < 0, p + 1 < s.count, s[p + 1] == UInt8(ascii: ".") else {
                    throw Failure(reason: "invalid weekday range at '\(rest(s, p))'")
                }
                rangeStart = nr
                p += 2
            } else if s[p] == UInt8(ascii: "-") {
                guard rangeStart < 0 else { throw Failure(reason: "invalid weekday range at '\(rest(s, p))'") }
                rangeStart = nr
                p += 1
            } else if s[p] == UInt8(ascii: ",") {
                rangeStart = -1
                p += 1
            }
            if p == s.count || s[p] == UInt8(ascii: " ") {
                while p < s.count, s[p] == UInt8(ascii: " ") { p += 1 }
                guard rangeStart < 0 else { throw Failure(reason: "open weekday range") }
                return
            }
            first = false
        }
    }

    /// Parses `[[Y-]M-]D` (or `@EPOCH`); false when what follows is a time instead.
    static func parseDate(_ s: [UInt8], _ p: inout Int, _ spec: inout CalendarSpec) throws -> Bool {
        var t = p
        if t == s.count { return false }
        if s[t] == UInt8(ascii: "@") {
            guard let seconds = epochSeconds(s[(t + 1)...]) else {
                throw Failure(reason: "invalid timestamp '\(rest(s, t))': whole seconds since the epoch only")
            }
            try epoch(seconds, &spec)
            p = s.count
            return true
        }
        let first = try parseChain(s, &t, usec: false)
        if t == s.count || s[t] == UInt8(ascii: ":") { return false }
        try dateSeparator(s, &t, &spec)
        let second = try parseChain(s, &t, usec: false)
        if t == s.count || s[t] == UInt8(ascii: " ") {
            while t < s.count, s[t] == UInt8(ascii: " ") { t += 1 }
            p = t
            spec.month = first
            spec.day = second
            return false
        }
        if spec.endOfMonth { throw Failure(reason: "'~' must come before the day at '\(rest(s, t))'") }
        try dateSeparator(s, &t, &spec)
        let third = try parseChain(s, &t, usec: false)
        guard t == s.count || s[t] == UInt8(ascii: " ") else {
            throw Failure(reason: "unexpected '\(rest(s, t))' after the date")
        }
        while t < s.count, s[t] == UInt8(ascii: " ") { t += 1 }
        p = t
        spec.year = first
        spec.month = second
        spec.day = third
        return false
    }

    /// `-` between date fields, or `~` (the day counts back from the month's end); moves past it.
    static func dateSeparator(_ s: [UInt8], _ t: inout Int, _ spec: inout CalendarSpec) throws {
        if s[t] == UInt8(ascii: "~") {
            spec.endOfMonth = true
        } else if s[t] != UInt8(ascii: "-") {
            throw Failure(reason: "expected '-' at '\(rest(s, t))'")
        }
        t += 1
    }

    static func parseTime(_ s: [UInt8], _ p: inout Int, _ spec: inout CalendarSpec) throws {
        var t = p
        let zero: [CalendarComponent] = [CalendarComponent(start: 0)]
        if t == s.count {
            spec.hour = zero
            spec.minute = zero
            spec.second = zero
            return
        }
        let h = try parseChain(s, &t, usec: false)
        guard t < s.count, s[t] == UInt8(ascii: ":") else { throw Failure(reason: "expected ':' at '\(rest(s, t))'") }
        t += 1
        let m = try parseChain(s, &t, usec: false)
        var sec: [CalendarComponent]? = zero
        if t < s.count {
            guard s[t] == UInt8(ascii: ":") else { throw Failure(reason: "expected ':' at '\(rest(s, t))'") }
            t += 1
            sec = try parseChain(s, &t, usec: true)
            guard t == s.count else { throw Failure(reason: "unexpected '\(rest(s, t))' after the time") }
        }
        p = t
        spec.hour = h
        spec.minute = m
        spec.second = sec
    }

    static func parseChain(_ s: [UInt8], _ p: inout Int, usec: Bool) throws -> [CalendarComponent]? {
        if p < s.count, s[p] == UInt8(ascii: "*") {
            p += 1
            return usec ? [CalendarComponent(start: 0, repeat: CalendarSpec.usecPerSecond)] : nil
        }
        var chain: [CalendarComponent] = []
        while true {
            guard chain.count < 2048 else { throw Failure(reason: "too many components") }
            chain.append(try parseComponent(s, &p, usec: usec))
            guard p < s.count, s[p] == UInt8(ascii: ",") else { break }
            p += 1
        }
        return chain
    }

    static func parseComponent(_ s: [UInt8], _ p: inout Int, usec: Bool) throws -> CalendarComponent {
        var e = p
        let start = try parseDecimal(s, &e, usec: usec)
        var stop = -1
        var step = 0
        if e + 1 < s.count, s[e] == UInt8(ascii: "."), s[e + 1] == UInt8(ascii: ".") {
            e += 2
            stop = try parseDecimal(s, &e, usec: usec)
            step = usec ? CalendarSpec.usecPerSecond : 1
        }
        if e < s.count, s[e] == UInt8(ascii: "/") {
            e += 1
            step = try parseDecimal(s, &e, usec: usec)
            guard step > 0 else { throw Failure(reason: "a repetition of 0") }
        } else {
            guard start <= Int(Int32.max) - step else { throw Failure(reason: "value out of range") }
            if usec && stop >= 0 && start + step > stop {
                throw Failure(reason: "a seconds range below 1 s needs a repetition")
            }
        }
        guard e == s.count || " ,-~:".utf8.contains(s[e]) else { throw Failure(reason: "unexpected '\(rest(s, e))'") }
        p = e
        return CalendarComponent(start: start, stop: stop, repeat: step)
    }

    static func parseDecimal(_ s: [UInt8], _ p: inout Int, usec: Bool) throws -> Int {
        guard p < s.count, isDigit(s[p]) else { throw Failure(reason: "expected a number at '\(rest(s, p))'") }
        var value = 0
        while p < s.count, isDigit(s[p]) {
            value = value * 10 + Int(s[p] - 48)
            guard value <= Int(Int32.max) else { throw Failure(reason: "number out of range") }
            p += 1
        }
        if usec {
            value *= CalendarSpec.usecPerSecond
            // One '.' is a decimal point; '..' is a range.
            if p < s.count, s[p] == UInt8(ascii: "."), p + 1 == s.count || s[p + 1] != UInt8(ascii: ".") {
                p += 1
                value += try parseMicroseconds(s, &p)
            }
            guard value <= Int(Int32.max) else { throw Failure(reason: "number out of range") }
        }
        return value
    }

    /// The digits after a decimal point as microseconds, rounded by the seventh digit alone (systemd's
    /// `parse_fractional_part_u()`: `.4200005` is 420001, `.42000049` is 420000); moves past every digit.
    static func parseMicroseconds(_ s: [UInt8], _ p: inout Int) throws -> Int {
        let first = p
        while p < s.count, isDigit(s[p]) { p += 1 }
        guard p > first else { throw Failure(reason: "expected digits after '.'") }
        var fraction = 0
        for i in first..<(first + 6) { fraction = fraction * 10 + (i < p ? Int(s[i] - 48) : 0) }
        if p - first > 6, s[first + 6] >= UInt8(ascii: "5") { fraction += 1 }
        return fraction
    }

    /// The number after `@`, read as systemd reads it (`strtoul()` in base 10, then nothing may follow):
    /// white space and one `+` or `-` may lead, `-N` wraps around as an unsigned long does; nil if invalid.
    static func epochSeconds(_ text: ArraySlice<UInt8>) -> time_t? {
        var i = text.startIndex
        while i < text.endIndex, " \t\n\r\u{0B}\u{0C}".utf8.contains(text[i]) { i += 1 }
        let negative = i < text.endIndex && text[i] == UInt8(ascii: "-")
        if i < text.endIndex, negative || text[i] == UInt8(ascii: "+") { i += 1 }
        guard i < text.endIndex else { return nil }
        var value: UInt64 = 0
        for c in text[i...] {
            guard isDigit(c) else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(c - 48))
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return time_t(Int64(bitPattern: negative ? 0 &- value : value))
    }

    /// `@EPOCH`: that one instant, in UTC.
    static func epoch(_ time: time_t, _ spec: inout CalendarSpec) throws {
        var seconds = time
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { throw Failure(reason: "timestamp out of range") }
        let tm = parts
        spec.year = [CalendarComponent(start: Int(tm.tm_year) + 1900)]
        spec.month = [CalendarComponent(start: Int(tm.tm_mon) + 1)]
        spec.day = [CalendarComponent(start: Int(tm.tm_mday))]
        spec.hour = [CalendarComponent(start: Int(tm.tm_hour))]
        spec.minute = [CalendarComponent(start: Int(tm.tm_min))]
        spec.second = [CalendarComponent(start: Int(tm.tm_sec) * CalendarSpec.usecPerSecond)]
        spec.utc = true
    }

    // MARK: Normalize and validate

    static func normalize(_ spec: inout CalendarSpec) {
        if spec.timeZone == "UTC" {
            spec.utc = true
            spec.timeZone = nil
        }
        if let w = spec.weekdays, w <= 0 || w >= 127 { spec.weekdays = nil }
        if spec.endOfMonth && spec.day == nil { spec.endOfMonth = false }
        spec.year = spec.year.map { $0.map(fixYear) }
        spec.year = normalizeChain(spec.year)
        spec.month = normalizeChain(spec.month)
        spec.day = normalizeChain(spec.day)
        spec.hour = normalizeChain(spec.hour)
        spec.minute = normalizeChain(spec.minute)
        spec.second = normalizeChain(spec.second)
    }

    static func fixYear(_ c: CalendarComponent) -> CalendarComponent {
        func fix(_ v: Int) -> Int { v >= 0 && v < 70 ? v + 2000 : (v >= 70 && v < 100 ? v + 1900 : v) }
        return CalendarComponent(start: fix(c.start), stop: c.stop >= 0 ? fix(c.stop) : c.stop, repeat: c.repeat)
    }

    static func normalizeChain(_ field: [CalendarComponent]?) -> [CalendarComponent]? {
        guard let field else { return nil }
        var chain = Array(field)
        for i in chain.indices {
            let c = chain[i]
            // The range's length becomes a multiple of the repetition.
            if c.stop > c.start && c.repeat > 0 { chain[i].stop = c.stop - (c.stop - c.start) % c.repeat }
            // A repetition that cannot fire even once, or a range of one value, is a plain value.
            let n = chain[i]
            if (n.stop > n.start && n.start + n.repeat > n.stop) || n.start == n.stop {
                chain[i].repeat = 0
                chain[i].stop = -1
            }
        }
        var unique: [CalendarComponent] = []
        for c in chain.sorted() where unique.last != c { unique.append(c) }
        return unique
    }

    static func invalidity(_ spec: CalendarSpec) -> String? {
        func check(_ chain: [CalendarComponent]?, _ name: String, _ from: Int, _ to: Int, endOfMonth: Bool = false)
            -> String?
        {
            let top = endOfMonth ? to - 3 : to
            for c in chain ?? [] {
                if c.start < from || c.start > top { return "\(name) \(c.start) is out of range \(from)..\(top)" }
                if c.repeat > top - from { return "\(name) repetition \(c.repeat) is too large" }
                if c.stop >= 0 && (c.stop < from || c.stop > top) {
                    return "\(name) \(c.stop) is out of range \(from)..\(top)"
                }
                // At least one repetition must fit (counted back from the month's end with `~`).
                let fits =
                    c.stop >= 0
                    ? c.start + c.repeat <= c.stop
                    : (endOfMonth ? c.start - c.repeat >= from : c.start + c.repeat <= top)
                if !fits { return "\(name) repetition /\(c.repeat) never fires after \(c.start)" }
            }
            return nil
        }
        return check(spec.year, "year", CalendarSpec.minYear, CalendarSpec.maxYear)
            ?? check(spec.month, "month", 1, 12)
            ?? check(spec.day, "day", 1, 31, endOfMonth: spec.endOfMonth)
            ?? check(spec.hour, "hour", 0, 23)
            ?? check(spec.minute, "minute", 0, 59)
            ?? check(spec.second, "second", 0, 60 * CalendarSpec.usecPerSecond - 1)
    }

    // MARK: Helpers

    static func hasPrefix(_ s: [UInt8], _ p: Int, _ word: String) -> Bool {
        let w = Array(word.utf8)
        guard s.count - p >= w.count else { return false }
        for i in 0..<w.count where lower(s[p + i]) != lower(w[i]) { return false }
        return true
    }

    static func lower(_ c: UInt8) -> UInt8 { c >= 65 && c <= 90 ? c + 32 : c }
    static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
    static func rest(_ s: [UInt8], _ p: Int) -> String { String(decoding: s[min(p, s.count)...], as: UTF8.self) }
}
