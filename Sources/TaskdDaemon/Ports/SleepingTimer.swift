import Synchronization
import TaskdIO

/// A timer that sleeps in a task, for when no timerfd can be made (out of descriptors): later by
/// up to a Dispatch timer's slack, but it fires.
final class SleepingTimer: DaemonTimer {
    private let fire: @Sendable () -> Void
    private let sleeper = Mutex<Task<Void, Never>?>(nil)

    init(_ fire: @escaping @Sendable () -> Void) { self.fire = fire }

    func arm(at monotonic: UInt64?) {
        let task = monotonic.map { due in
            Task(executorPreference: EventLoop.shared) { [fire] in
                let now = DeadlineTimer.now()
                if due > now {
                    do { try await Task.sleep(for: .microseconds(Int64(clamping: due - now))) } catch { return }
                }
                fire()
            }
        }
        sleeper.withLock {
            $0?.cancel()
            $0 = task
        }
    }
}
