/// One element of a calendar field: a value, a range `start..stop`, and a repetition `/repeat`
/// (systemd's CalendarComponent). Seconds are kept in microseconds.
public struct CalendarComponent: Hashable, Comparable, Sendable {
    public var start: Int
    /// The range's end, or -1 for none.
    public var stop: Int
    /// The step, or 0 for none.
    public var `repeat`: Int

    public init(start: Int, stop: Int = -1, repeat: Int = 0) {
        self.start = start
        self.stop = stop
        self.repeat = `repeat`
    }

    public static func < (a: CalendarComponent, b: CalendarComponent) -> Bool {
        (a.start, a.stop, a.repeat) < (b.start, b.stop, b.repeat)
    }
}
