/// How many output lines one run may send to the journal per interval ([Exec] LogRateLimitIntervalSec=,
/// LogRateLimitBurst=); what is over is dropped and counted. A zero interval or burst turns it off.
public struct OutputRateLimit: Hashable, Sendable {
    public static let standard = OutputRateLimit(interval: .seconds(10), burst: 1000)
    public static let off = OutputRateLimit(interval: .zero, burst: 0)

    public var interval: TimeSpan
    public var burst: Int

    public init(interval: TimeSpan, burst: Int) {
        self.interval = interval
        self.burst = burst
    }

    public var isOff: Bool { interval.microseconds == 0 || burst == 0 }
}
