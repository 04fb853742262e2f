/// One reading of both clocks, in microseconds: monotonic for scheduling, realtime for people and handlers.
public struct ClockReading: Hashable, Sendable {
    public var monotonic: UInt64
    public var realtime: UInt64

    public init(monotonic: UInt64, realtime: UInt64) {
        self.monotonic = monotonic
        self.realtime = realtime
    }

    /// The realtime that corresponds to a monotonic instant, by the offset of this reading.
    public func realtime(at monotonicInstant: UInt64) -> UInt64 {
        monotonicInstant >= monotonic
            ? realtime &+ (monotonicInstant - monotonic) : realtime &- (monotonic - monotonicInstant)
    }

    /// A reading `usec` later on both clocks (for manual clocks in tests).
    public func advanced(by usec: UInt64) -> ClockReading {
        ClockReading(monotonic: monotonic + usec, realtime: realtime + usec)
    }
}
