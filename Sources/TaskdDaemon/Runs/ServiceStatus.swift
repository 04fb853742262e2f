import TaskScheduling
import TaskdIO
import TaskdSystem

/// What the daemon tells its service manager (sd_notify): `STATUS=` once per turn of the event loop
/// when it changed, and `WATCHDOG=1` every half `WATCHDOG_USEC`. Used from the event loop only.
final class ServiceStatus: @unchecked Sendable {
    let notifier: ServiceNotifier
    private let clock: any DaemonClock
    private var last = ""
    /// Whether a `STATUS=` is due at the end of this turn already.
    private(set) var pending = false
    private var watchdog: (any DaemonTimer)?

    init(notifier: ServiceNotifier, clock: any DaemonClock) {
        self.notifier = notifier
        self.clock = clock
    }

    /// Sends `text` as `STATUS=` once the loop's turn is over (a burst of changes sends one
    /// notification, after the handlers the turn started); `text` is asked for then.
    func changed(_ text: @escaping @Sendable () -> Void) {
        guard !pending else { return }
        pending = true
        EventLoop.shared.afterTurn(text)
    }

    /// Sends `STATUS=text` unless it was the last one sent.
    func send(_ text: String) {
        pending = false
        guard text != last else { return }
        last = text
        notifier.notify("STATUS=\(text)")
    }

    /// Forgets the last status (a reload's `READY=1` goes with a fresh one).
    func reset() { last = "" }

    /// Sends `WATCHDOG=1` every `interval` µs, each pet going through `pet`, which must call its
    /// argument on the event loop: the daemon's round trip, so that a wedged loop, or a cooperative
    /// pool that no longer runs, stops the pets and systemd restarts taskd.
    func startWatchdog(
        every interval: UInt64, through pet: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        watchdog = clock.makeTimer { [self] in pet { self.petted(every: interval) } }
        watchdog?.arm(at: clock.now().monotonic &+ interval)
    }

    private func petted(every interval: UInt64) {
        notifier.notify("WATCHDOG=1")
        watchdog?.arm(at: clock.now().monotonic &+ interval)
    }

    /// `STATUS=`: runs active and queued, and the next timer.
    func text(_ scheduler: Scheduler, now: ClockReading) -> String {
        let running = scheduler.activeCount
        let waiting = scheduler.runs.count - running
        var text = running == 0 ? "Idle" : "\(running) run(s) active"
        if scheduler.isDraining { text = "Draining: " + (running == 0 ? "no run active" : text) }
        if waiting > 0 { text += ", \(waiting) queued" }
        if let (due, key) = scheduler.tasks.nextDue, !scheduler.isStopping {
            text += "; next: \(key.identifier) at \(Timestamp.format(now.realtime(at: due)))"
        }
        return text
    }
}
