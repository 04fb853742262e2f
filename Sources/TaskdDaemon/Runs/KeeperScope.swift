import TaskRuntime
import TaskdSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Under systemd, the run keeper and the command runs live in a scope of their own
/// (`taskd-runs.scope` for `taskd.service`), delegated, outside taskd's unit: a restart, a crash or
/// the watchdog's restart of the unit kills taskd's processes and leaves them. The runs get their
/// cgroups below the scope. (The unit's own cgroup cannot be it on systemd 252: once it has
/// controllers enabled for run cgroups, a restarted main process may not enter it.)
enum KeeperScope {
    /// Places `keeper` in the scope (started for it, or found from a taskd before this one) and sets
    /// up run cgroups there; nil and why not, in which case the runs die with the unit.
    static func place(_ keeper: RunKeeper, keeping: Set<String>) -> (placed: Bool, cgroups: RunCgroups?, why: String) {
        guard let unit = ownUnit() else { return (false, nil, "taskd's unit cannot be told from /proc/self/cgroup") }
        let name = String(unit.dropLast(".service".count)) + "-runs.scope"
        guard let pid = keeper.pid, let current = RunCgroups.cgroup(of: pid) else {
            return (false, nil, "the keeper's cgroup cannot be read")
        }
        if scopePath(current, name) == nil {
            if let why = ServiceScope.start(
                name, pid: pid, description: "command runs of \(unit), kept across its restarts")
            {
                return (false, nil, "\(name): \(why)")
            }
        }
        // The job that moves it runs at once; its effect is seen in /proc/PID/cgroup.
        var scope: String?
        for _ in 0..<200 {
            if let path = RunCgroups.cgroup(of: pid).flatMap({ scopePath($0, name) }) {
                scope = path
                break
            }
            usleep(10_000)
        }
        guard let scope else { return (false, nil, "\(name): the keeper did not enter it") }
        let (cgroups, why) = RunCgroups.setUp(scope: scope, keeperPID: pid, keeping: keeping)
        return (true, cgroups, why)
    }

    /// The scope's folder if `cgroup` is in it (the scope itself or below).
    private static func scopePath(_ cgroup: String, _ name: String) -> String? {
        let parts = cgroup.split(separator: "/", omittingEmptySubsequences: false)
        guard let i = parts.firstIndex(where: { $0 == name }) else { return nil }
        return parts[...i].joined(separator: "/")
    }

    /// This process's systemd unit (`taskd.service`), from its cgroup.
    static func ownUnit() -> String? {
        RunCgroups.cgroup(of: getpid())?.split(separator: "/").last { $0.hasSuffix(".service") }.map(String.init)
    }
}
