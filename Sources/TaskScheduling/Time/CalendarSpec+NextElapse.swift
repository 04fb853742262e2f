import CTaskdShim

#if canImport(Glibc)
    import Glibc
#endif

extension CalendarSpec {
    /// Parses `expression` (systemd.time(7)); a trailing word is a time zone if /usr/share/zoneinfo has it.
    public init(parsing expression: String) throws(CalendarError) {
        let names = TimeZoneContext.with(nil) { [String(cString: taskd_tzname(0)), String(cString: taskd_tzname(1))] }
        self = try CalendarSpecParser.parse(expression, isTimeZone: TimeZoneContext.isValid, localZoneNames: names)
    }

    /// The first elapse strictly after `realtime` (CLOCK_REALTIME µs); nil only if the expression never elapses again.
    ///
    /// The search is systemd's `calendar_spec_next_usec()` in the expression's zone, with its fix for
    /// negative DST (systemd PR #36897, in Debian's 252): when the search lands at or before where it started
    /// (glibc normalizes a time in an Irish-rules gap backwards), it moves on an hour and from then on keeps
    /// the DST flag normalization gives. Where systemd gives up ("infinite loop in calendar calculation":
    /// normalization keeps moving it back), the search is made again without ever moving backwards. Should
    /// a result still not be after `realtime`, the search starts again from later instants, a bounded
    /// number of times: the result is never at or before `realtime`, so iterating it always moves forward.
    public func nextElapse(after realtime: UInt64) -> UInt64? {
        TimeZoneContext.with(utc ? nil : timeZone) { nextElapseInCurrentZone(after: realtime) }
    }

    /// `nextElapse(after:)` in the zone libc has now: the caller holds `TimeZoneContext`.
    func nextElapseInCurrentZone(after realtime: UInt64) -> UInt64? {
        var from = realtime
        var skip = UInt64(Self.usecPerSecond)
        for _ in 0..<Self.stuckRetries {
            guard from < Self.formattableMax else { return nil }
            let (next, gaveUp) = search(after: from)
            if let next, next > realtime { return next }
            if next == nil && !gaveUp { return nil }
            // At or before the base, or no answer: start again later, each time twice as far on.
            from = max(from, next ?? 0) + skip
            skip *= 2
        }
        return nil
    }

    /// systemd's maximum (9999-12-31 23:59:59 UTC): nothing at or after it has a next elapse.
    static let formattableMax: UInt64 = 253_402_300_799_000_000
    /// How often `nextElapseInCurrentZone` starts again from later when stuck (2^32 s spans every year).
    static let stuckRetries = 32

    /// systemd's search from just after `realtime`, then the forward-only one if that gave up: the elapse
    /// found, or nil, and whether both gave up (then nil does not mean "never").
    private func search(after realtime: UInt64) -> (next: UInt64?, gaveUp: Bool) {
        let usec = realtime + 1
        var t = time_t(usec / 1_000_000)
        var start = tm()
        if utc { gmtime_r(&t, &start) } else { localtime_r(&t, &start) }
        for forwardOnly in [false, true] {
            var parts = start
            var micro = Int(usec % 1_000_000)
            guard let found = findNext(&parts, &micro, forwardOnly: forwardOnly) else { continue }
            guard found else { return (nil, false) }
            let seconds = normalize(&parts)
            guard seconds >= 0 else { return (nil, false) }
            return (UInt64(seconds) * 1_000_000 + UInt64(micro), false)
        }
        return (nil, true)
    }

    private func normalize(_ t: inout tm) -> Int {
        utc ? Int(timegm(&t)) : Int(mktime(&t))
    }

    private func endOfMonth(_ t: tm, _ day: Int) -> Int {
        var c = t
        c.tm_mon += 1
        c.tm_mday = Int32(1 - day)
        if normalize(&c) < 0 || c.tm_mon != t.tm_mon { return -1 }
        return Int(c.tm_mday)
    }

    /// systemd's `find_matching_component`: moves `value` to the next allowed one; nil if none,
    /// true if it changed.
    private func match(_ chain: [CalendarComponent]?, isDay: Bool, _ t: tm, _ value: inout Int) -> Bool? {
        guard let chain else { return false }
        var best: Int?
        for c in chain {
            var start = c.start
            var stop = c.stop
            if endOfMonth && isDay {
                start = endOfMonth(t, c.start)
                stop = endOfMonth(t, c.stop)
                if stop > 0 { swap(&start, &stop) }
            }
            if start >= value {
                if best == nil || start < best! { best = start }
            } else if c.repeat > 0 {
                let k = start + c.repeat * ((value - start + c.repeat - 1) / c.repeat)
                if (best == nil || k < best!) && (stop < 0 || k <= stop) { best = k }
            }
        }
        guard let best else { return nil }
        defer { value = best }
        return best != value
    }

    /// systemd's `tm_within_bounds`: nil if normalizing went backwards or past the maximum year,
    /// true if `t` was already normal, false if it was normalized forward (then look again).
    private func withinBounds(_ t: inout tm) -> Bool? {
        if Int(t.tm_year) + 1900 > Self.maxYear { return nil }
        var n = t
        if normalize(&n) < 0 { return nil }
        // The first field normalization changed decides; the field below it starts over (systemd).
        let fields = [
            (n.tm_year, t.tm_year), (n.tm_mon, t.tm_mon), (n.tm_mday, t.tm_mday), (n.tm_hour, t.tm_hour),
            (n.tm_min, t.tm_min), (n.tm_sec, t.tm_sec),
        ]
        guard let changed = fields.firstIndex(where: { $0.0 != $0.1 }) else { return true }
        if fields[changed].0 < fields[changed].1 { return nil }
        switch changed {
        case 0: n.tm_mon = 0
        case 1: n.tm_mday = 1
        case 2: n.tm_hour = 0
        case 3: n.tm_min = 0
        case 4: n.tm_sec = 0
        default: break
        }
        t = n
        return false
    }

    private func matchesWeekday(_ t: tm) -> Bool {
        guard let weekdays else { return true }
        var c = t
        if normalize(&c) < 0 { return false }
        let k = c.tm_wday == 0 ? 6 : Int(c.tm_wday) - 1
        return weekdays & (1 << k) != 0
    }

    /// systemd's `find_next`: year, month, day, weekday, hour, minute, second, in its order; false if none,
    /// nil if it gave up.
    ///
    /// Each round sets `tm_isdst` to the expression's (-1: unknown) until the search gets stuck, finding a
    /// time before the one it started from: then it moves on an hour and keeps the flag normalization
    /// gives, so that a carry into a gap is read with the offset before it and moves forward. `forwardOnly`
    /// (not systemd's) also refuses each round's normalization when it moves backwards, so every round
    /// moves forward and the search ends.
    private func findNext(_ tmIn: inout tm, _ usecIn: inout Int, forwardOnly: Bool) -> Bool? {
        var c = tmIn
        var micro = usecIn
        var keepDST = false
        func reset(from level: Int) {
            if level <= 1 { c.tm_mon = 0 }
            if level <= 2 { c.tm_mday = 1 }
            if level <= 3 { c.tm_hour = 0 }
            if level <= 4 { c.tm_min = 0 }
            c.tm_sec = 0
            micro = 0
        }
        /// One field of systemd's loop: move it to the next allowed value (resetting the fields below
        /// it if it moved), then check the time still exists. False means "look again": after
        /// `carry` (no value left, or normalizing went backwards) or after normalizing forward.
        func step(
            _ chain: [CalendarComponent]?, isDay: Bool = false, read: () -> Int, write: (Int) -> Void,
            resetBelow level: Int?, carry: () -> Void
        ) -> Bool {
            var v = read()
            let moved = match(chain, isDay: isDay, c, &v)
            write(v)
            if moved == true, let level { reset(from: level) }
            guard moved != nil, let exact = withinBounds(&c) else {
                carry()
                return false
            }
            return exact
        }
        for _ in 0..<1000 {
            let wanted = c
            _ = normalize(&c)
            if forwardOnly && Self.isBefore(c, 0, wanted, 0) { c = forwardReading(of: wanted) }
            if !keepDST { c.tm_isdst = dstFlag ?? -1 }

            var v = Int(c.tm_year) + 1900
            let ry = match(year, isDay: false, c, &v)
            c.tm_year = Int32(v - 1900)
            guard let ry else { return false }
            if ry { reset(from: 1) }
            guard withinBounds(&c) == true else { return false }

            let nextYear = {
                c.tm_year += 1; reset(from: 1)
            }
            let nextMonth = {
                c.tm_mon += 1; reset(from: 2)
            }
            let nextDay = {
                c.tm_mday += 1; reset(from: 3)
            }
            let nextHour = {
                c.tm_hour += 1; reset(from: 4)
            }
            let nextMinute = {
                c.tm_min += 1; reset(from: 5)
            }

            guard
                step(
                    month, read: { Int(c.tm_mon) + 1 }, write: { c.tm_mon = Int32($0 - 1) }, resetBelow: 2,
                    carry: nextYear)
            else { continue }
            guard
                step(
                    day, isDay: true, read: { Int(c.tm_mday) }, write: { c.tm_mday = Int32($0) }, resetBelow: 3,
                    carry: nextMonth)
            else { continue }
            if !matchesWeekday(c) {
                nextDay()
                continue
            }
            guard step(hour, read: { Int(c.tm_hour) }, write: { c.tm_hour = Int32($0) }, resetBelow: 4, carry: nextDay)
            else { continue }
            guard step(minute, read: { Int(c.tm_min) }, write: { c.tm_min = Int32($0) }, resetBelow: 5, carry: nextHour)
            else { continue }
            let readSecond = { Int(c.tm_sec) * Self.usecPerSecond + micro }
            let writeSecond = { (v: Int) in
                micro = v % Self.usecPerSecond
                c.tm_sec = Int32(v / Self.usecPerSecond)
            }
            guard step(second, read: readSecond, write: writeSecond, resetBelow: nil, carry: nextMinute) else {
                continue
            }
            if Self.isBefore(c, micro, tmIn, usecIn) {
                keepDST = true
                c.tm_hour += 1
                continue
            }

            tmIn = c
            usecIn = micro
            return true
        }
        return nil
    }

    /// The earliest normalization of the local time `t` that does not move it backwards, whatever DST
    /// flag that takes; the next hour if there is none.
    private func forwardReading(of t: tm) -> tm {
        var best: (seconds: Int, parts: tm)?
        for flag: Int32 in [-1, 0, 1] {
            var n = t
            n.tm_isdst = flag
            let seconds = normalize(&n)
            if seconds >= 0, !Self.isBefore(n, 0, t, 0), best == nil || seconds < best!.seconds { best = (seconds, n) }
        }
        if let best { return best.parts }
        var next = t
        next.tm_hour += 1
        next.tm_min = 0
        next.tm_sec = 0
        return next
    }

    /// True if the local time `a` (plus `aMicro` µs) comes before `b` (plus `bMicro`), field by field.
    private static func isBefore(_ a: tm, _ aMicro: Int, _ b: tm, _ bMicro: Int) -> Bool {
        let x = (a.tm_year, a.tm_mon, a.tm_mday, a.tm_hour, a.tm_min, a.tm_sec)
        let y = (b.tm_year, b.tm_mon, b.tm_mday, b.tm_hour, b.tm_min, b.tm_sec)
        return x < y || (x == y && aMicro < bMicro)
    }
}
