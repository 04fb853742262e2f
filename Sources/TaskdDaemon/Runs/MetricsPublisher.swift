import TaskScheduling
import TaskdIO

/// What the metrics count (wakes served, runs by outcome, durations), and `MetricsFile=`: rewritten
/// (a temporary file renamed over it, so a reader never sees half) once something changed, at most
/// every `interval`. Held by the daemon, so used on the loop only (not `Sendable`).
final class MetricsPublisher: RunEventObserver {
    private(set) var counters = MetricCounters()
    /// `MetricsFile=`, if set.
    let file: String?
    /// The shortest time between two writes of `file` (µs).
    static let interval: UInt64 = 10_000_000
    private let clock: any DaemonClock
    private var timer: (any DaemonTimer)?
    private var pending = false
    private var writtenAt: UInt64 = 0

    init(file: String?, clock: any DaemonClock) {
        self.file = file
        self.clock = clock
    }

    func observe(_ event: SchedulerEvent) {
        if case .ended(let run) = event { counters.ended(run) }
    }

    /// A wake was served.
    func countWake() { counters.wakes &+= 1 }

    /// Something changed: `write` is called on the event loop (through `fire`) once `interval`
    /// has passed since the last write.
    func changed(fire: @escaping @Sendable () -> Void) {
        guard file != nil, !pending else { return }
        pending = true
        if timer == nil { timer = clock.makeTimer(fire) }
        timer?.arm(at: max(clock.now().monotonic, writtenAt &+ Self.interval))
    }

    /// Writes `text` (the Prometheus form) to `file`; the error, if it could not.
    func write(_ text: [UInt8]) -> String? {
        guard let file else { return nil }
        pending = false
        writtenAt = clock.now().monotonic
        return FileIO.replace(file, with: text, sync: false).map { "cannot write MetricsFile=\(file): \($0)" }
    }
}
