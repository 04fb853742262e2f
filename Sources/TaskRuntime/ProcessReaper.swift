import CTaskdShim
@preconcurrency import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reaps what a command leaves behind in its process group after its leader exits. With
/// `becomeSubreaper()`, orphaned grandchildren are reparented to this process; they are killed
/// with the group and reaped here by `waitpid(-pgid)`, polled with a backoff until the group is gone.
/// It never calls `waitpid(-1)`, so it does not steal exit statuses from anything else in the
/// process (Foundation.Process), and it does not watch SIGCHLD: a SIGCHLD source would wake three
/// threads at every command's exit (libdispatch takes the signal on whichever thread has it
/// unblocked and forwards it to its manager thread), while the loop waits for the exit on a pidfd.
public final class ProcessReaper: Sendable {
    public static let shared = ProcessReaper()

    /// The first poll of a lingering group, after the one made at once; each next waits twice as long.
    static let firstRetry: UInt64 = 1_000_000
    /// The longest wait between two polls (a member stuck in uninterruptible sleep).
    static let maxRetry: UInt64 = 1_000_000_000

    private let queue = DispatchQueue(label: "taskd.reaper")
    private let lingering = Mutex<Set<pid_t>>([])

    /// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`), so a command's orphans stay ours.
    @discardableResult
    public func becomeSubreaper() -> Bool {
        taskd_set_child_subreaper() == 0
    }

    /// Process groups that still have members after their leader was reaped.
    public var lingeringGroups: Set<pid_t> { lingering.withLock { $0 } }

    /// Kills what is left of `pgid` and reaps it. A group left empty (the usual case) costs one
    /// `kill` that fails with ESRCH, and wakes no other thread.
    func release(group pgid: pid_t) {
        guard kill(-pgid, SIGKILL) == 0 else { return }
        let added = lingering.withLock { $0.insert(pgid).inserted }
        if added { queue.async { self.reap(pgid, retryAfter: Self.firstRetry) } }
    }

    /// Reaps the members of `pgid` that have exited; polls again later while any is left.
    private func reap(_ pgid: pid_t, retryAfter delay: UInt64) {
        while true {
            var status: Int32 = 0
            let r = waitpid(-pgid, &status, WNOHANG)
            if r > 0 { continue }
            if r < 0 && errno == EINTR { continue }
            if r < 0 {  // ECHILD: nothing of the group is left
                lingering.withLock { _ = $0.remove(pgid) }
                return
            }
            break
        }
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay))) {
            self.reap(pgid, retryAfter: min(delay * 2, Self.maxRetry))
        }
    }
}
