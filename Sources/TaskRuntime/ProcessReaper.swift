import CTaskdShim
@preconcurrency import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reaps what a command leaves behind in its process group after its leader exits. With
/// `becomeSubreaper()`, orphaned grandchildren are reparented to this process; they are killed
/// with the group and reaped here by `waitpid(-pgid)` on each SIGCHLD. It never calls `waitpid(-1)`,
/// so it does not steal exit statuses from anything else in the process (Foundation.Process).
public final class ProcessReaper: Sendable {
    public static let shared = ProcessReaper()

    private let queue = DispatchQueue(label: "taskd.reaper")
    private let lingering = Mutex<Set<pid_t>>([])
    private let source: Mutex<(any DispatchSourceSignal)?> = Mutex(nil)

    /// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`), so a command's orphans stay ours.
    @discardableResult
    public func becomeSubreaper() -> Bool {
        startWatching()
        return taskd_set_child_subreaper() == 0
    }

    /// Process groups that still have members after their leader was reaped.
    public var lingeringGroups: Set<pid_t> { lingering.withLock { $0 } }

    /// Kills what is left of `pgid` and reaps it now and on later SIGCHLDs.
    func release(group pgid: pid_t) {
        kill(-pgid, SIGKILL)
        lingering.withLock { _ = $0.insert(pgid) }
        startWatching()
        queue.async { self.reapLingering() }
    }

    private func startWatching() {
        source.withLock { current in
            guard current == nil else { return }
            let s = DispatchSource.makeSignalSource(signal: SIGCHLD, queue: queue)
            s.setEventHandler { @Sendable [weak self] in self?.reapLingering() }
            s.resume()
            current = s
        }
    }

    private func reapLingering() {
        let groups = lingering.withLock { $0 }
        for pgid in groups {
            while true {
                var status: Int32 = 0
                let r = waitpid(-pgid, &status, WNOHANG)
                if r > 0 { continue }
                if r < 0 && errno == ECHILD { lingering.withLock { _ = $0.remove(pgid) } }
                break
            }
        }
    }
}
