/// A calendar expression as systemd's `OnCalendar=` understands it (systemd.time(7)): parsed,
/// normalized and printed exactly as `systemd-analyze calendar` prints its normalized form.
/// A nil field is `*`.
public struct CalendarSpec: Hashable, Sendable, CustomStringConvertible {
    /// Weekday bits, Monday = bit 0; nil for every day.
    public var weekdays: Int?
    public var year: [CalendarComponent]?
    public var month: [CalendarComponent]?
    public var day: [CalendarComponent]?
    /// `~`: days count back from the end of the month.
    public var endOfMonth = false
    public var hour: [CalendarComponent]?
    public var minute: [CalendarComponent]?
    /// Seconds, in microseconds.
    public var second: [CalendarComponent]?
    public var utc = false
    /// An IANA time zone name, when the expression ends with one.
    public var timeZone: String?
    /// The local zone's standard (0) or daylight-saving (1) abbreviation the expression ended with
    /// (`12:00 CET`), and that abbreviation: local times are then read with `tm_isdst` forced to it.
    public var dst: (flag: Int32, name: String)? {
        get { dstFlag.map { ($0, dstName) } }
        set {
            dstFlag = newValue?.flag
            dstName = newValue?.name ?? ""
        }
    }
    var dstFlag: Int32?
    var dstName = ""

    static let usecPerSecond = 1_000_000
    static let minYear = 1970
    static let maxYear = 2199
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// The normalized form, as `systemd-analyze calendar` prints it.
    public var description: String {
        var out = ""
        if let weekdays { out += Self.formatWeekdays(weekdays) + " " }
        out += Self.format(year, width: 4) + "-" + Self.format(month, width: 2) + (endOfMonth ? "~" : "-")
        out += Self.format(day, width: 2) + " " + Self.format(hour, width: 2) + ":" + Self.format(minute, width: 2)
        out += ":" + Self.format(second, width: 2, usec: true)
        if utc {
            out += " UTC"
        } else if let timeZone {
            out += " " + timeZone
        } else if dstFlag != nil, !dstName.isEmpty {
            out += " " + dstName
        }
        return out
    }

    static func formatWeekdays(_ bits: Int) -> String {
        var out = ""
        var runStart = -1
        func closeRun(_ x: Int) {
            if x > runStart + 1 { out += (x > runStart + 2 ? ".." : ",") + dayNames[x - 1] }
        }
        for x in 0..<7 {
            if bits & (1 << x) != 0 {
                if runStart < 0 {
                    if !out.isEmpty { out += "," }
                    out += dayNames[x]
                    runStart = x
                }
            } else if runStart >= 0 {
                closeRun(x)
                runStart = -1
            }
        }
        if runStart >= 0 { closeRun(7) }
        return out
    }

    /// One field as systemd prints it. Seconds print as `*` whenever their chain holds `0/1` (every second),
    /// whatever else it holds: systemd's form drops the others, though they still elapse (`0/1,3.5`).
    static func format(_ chain: [CalendarComponent]?, width: Int, usec: Bool = false) -> String {
        guard let chain else { return "*" }
        let d = usec ? usecPerSecond : 1
        if usec, chain.contains(CalendarComponent(start: 0, repeat: usecPerSecond)) { return "*" }
        return chain.map { c in
            var s = pad(c.start / d, width)
            if c.start % d > 0 { s += "." + pad(c.start % d, 6) }
            if c.stop > 0 { s += ".." + pad(c.stop / d, width) }
            if c.stop > 0, c.stop % d > 0 { s += "." + pad(c.stop % d, 6) }
            let isPlainRange = c.stop > 0 && c.repeat == d
            let steps = c.repeat.quotientAndRemainder(dividingBy: d).quotient
            if c.repeat > 0 && !isPlainRange { s += "/" + String(steps) }
            if c.repeat % d > 0 { s += "." + pad(c.repeat % d, 6) }
            return s
        }.joined(separator: ",")
    }

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}

/// A calendar expression that does not parse or cannot be valid, with the part at fault.
public struct CalendarError: Error, Hashable, Sendable, CustomStringConvertible {
    public var expression: String
    public var reason: String
    public var description: String { "invalid calendar expression '\(expression)': \(reason)" }
}
