import TaskScheduling
import TaskdIO
import TaskdSystem

/// What the daemon tells its service manager (sd_notify): `STATUS=` once per turn of the event loop
/// when it changed, and `WATCHDOG=1` every half `WATCHDOG_USEC`. Held by the daemon, so used on the loop only (not `Sendable`).
final class ServiceStatus {
    let notifier: ServiceNotifier
    private let clock: any DaemonClock
    private var last = ""
    /// Whether a `STATUS=` is due at the end of this turn already.
    private(set) var pending = false
    private var watchdog: (any DaemonTimer)?
    private var watchdogInterval: UInt64 = 0

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

    /// Sends `WATCHDOG=1` every `interval` µs: `timer` fires, the daemon makes its round trip
    /// and calls `petted` on the loop, so that a wedged loop, or a cooperative pool that no longer
    /// runs, stops the pets and systemd restarts taskd.
    func startWatchdog(every interval: UInt64, timer: any DaemonTimer) {
        watchdogInterval = interval
        watchdog = timer
        timer.arm(at: clock.now().monotonic &+ interval)
    }

    /// The round trip of a pet is over: `WATCHDOG=1`, and the next in `interval`.
    func petted() {
        notifier.notify("WATCHDOG=1")
        watchdog?.arm(at: clock.now().monotonic &+ watchdogInterval)
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
