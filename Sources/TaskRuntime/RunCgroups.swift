import CTaskdShim
import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Where command runs get cgroups of their own: taskd's cgroup, once systemd delegated it
/// (`Delegate=yes`). taskd moves itself into `taskd/` below it (a cgroup with children may hold no
/// process once controllers are enabled for them), enables the controllers it was given, and
/// makes each run's `run-ID` beside it.
public struct RunCgroups: Sendable {
    /// `[Daemon] RunCgroups=`.
    public enum Mode: String, Sendable {
        /// When systemd delegated taskd's cgroup (its `trusted.delegate` or `user.delegate` mark).
        case auto
        /// Whenever taskd's cgroup (v2) is writable: for tests and measurements outside systemd.
        case yes
        case no
    }

    /// taskd's own cgroup, the runs' parent.
    public let root: String
    /// The controllers enabled for the runs (`memory`, `cpu`, `io`, `pids`, those it was given).
    public let controllers: [String]

    /// Sets up run cgroups as `mode` allows: the cgroups, or nil and why not (said once at start).
    /// Run cgroups left by an earlier taskd are removed, but for those of the runs in `keeping`
    /// (ids of the runs an upgrade hands over).
    public static func setUp(_ mode: Mode, keeping: Set<String> = []) -> (cgroups: RunCgroups?, why: String) {
        guard mode != .no else { return (nil, "RunCgroups=no") }
        // systemd sets INVOCATION_ID for every service it starts: without it nothing was delegated.
        if mode == .auto && getenv("INVOCATION_ID") == nil { return (nil, "not started by systemd") }
        guard let own = ownCgroup() else { return (nil, "no cgroup v2 hierarchy") }
        if mode == .auto && !isDelegated(own) {
            return (nil, "\(own) is not delegated to taskd (Delegate=yes in its unit)")
        }
        return setUp(root: own, leaf: "taskd", process: getpid(), what: "taskd", keeping: keeping)
    }

    /// Moves `process` into `root/leaf` (a cgroup with children may hold no process once
    /// controllers are enabled for them), removes the run cgroups an earlier taskd left but
    /// `keeping`'s, and enables the controllers `root` was given for the runs.
    private static func setUp(root: String, leaf: String, process: pid_t, what: String, keeping: Set<String>)
        -> (cgroups: RunCgroups?, why: String)
    {
        let home = root + "/" + leaf
        guard mkdir(home, 0o755) == 0 || errno == EEXIST else {
            return (nil, "cannot make \(home): \(String(cString: strerror(errno)))")
        }
        guard RunCgroup.write(home + "/cgroup.procs", String(process)) else {
            return (nil, "cannot move \(what) into \(home): \(String(cString: strerror(errno)))")
        }
        removeStale(root, keeping: keeping)
        let available = (RunCgroup.read(root + "/cgroup.controllers") ?? "").split(separator: " ").map {
            $0.filter { !$0.isWhitespace }
        }
        var enabled: [String] = []
        for controller in ["cpu", "io", "memory", "pids"].filter(available.contains)
        where RunCgroup.write(root + "/cgroup.subtree_control", "+" + controller) {
            enabled.append(controller)
        }
        return (RunCgroups(root: root, controllers: enabled), "")
    }

    public init(root: String, controllers: [String]) {
        self.root = root
        self.controllers = controllers
    }

    /// Run cgroups in the run keeper's scope (`scope`, delegated): the keeper (`keeperPID`) moves
    /// into `keeper/` below it, the controllers given are enabled, and run cgroups an earlier taskd
    /// left are removed but for `keeping`'s. Nil and why if the scope cannot hold them.
    public static func setUp(scope: String, keeperPID: pid_t, keeping: Set<String>) -> (
        cgroups: RunCgroups?, why: String
    ) {
        setUp(root: scope, leaf: "keeper", process: keeperPID, what: "the keeper", keeping: keeping)
    }

    /// Where the runs' cgroups are and which controllers they have, for the journal.
    public var summary: String {
        "below \(root) (controllers: \(controllers.isEmpty ? "none" : controllers.joined(separator: " ")))"
    }

    /// `/sys/fs/cgroup/…` of process `pid` in the v2 hierarchy; nil if it cannot be read.
    public static func cgroup(of pid: pid_t) -> String? {
        guard let lines = RunCgroup.read("/proc/\(pid)/cgroup")?.split(separator: "\n"),
            let line = lines.first(where: { $0.hasPrefix("0::") }),
            let mount = cgroup2MountPoint()
        else { return nil }
        let path = String(line.dropFirst(3))
        return mount + (path == "/" ? "" : path)
    }

    /// The cgroup of a run an earlier image made (`taskctl upgrade`).
    public func adopt(runID: String) throws(SpawnError) -> RunCgroup {
        try RunCgroup(adopting: root + "/run-" + runID)
    }

    /// The run's cgroup, limits written.
    public func make(runID: String, limits: ResourceLimits, unapplied: inout [String]) throws(SpawnError) -> RunCgroup {
        try RunCgroup(parent: root, name: "run-" + runID, limits: limits, unapplied: &unapplied)
    }

    /// `/sys/fs/cgroup/…` of this process in the v2 hierarchy, from /proc/self/cgroup and mountinfo.
    static func ownCgroup() -> String? {
        guard let lines = RunCgroup.read("/proc/self/cgroup")?.split(separator: "\n"),
            let line = lines.first(where: { $0.hasPrefix("0::") }),
            let mount = cgroup2MountPoint()
        else { return nil }
        var path = String(line.dropFirst(3))
        // A process already moved into taskd/ (a restart in place) names its parent.
        if path.hasSuffix("/taskd") { path.removeLast("/taskd".count) }
        let root = mount + (path == "/" ? "" : path)
        return access(root + "/cgroup.procs", W_OK) == 0 ? root : nil
    }

    /// Where the cgroup2 file system is mounted: the mount point (field 5) of the mountinfo line
    /// whose file system type, after the "-" separator, is `cgroup2`.
    private static func cgroup2MountPoint() -> String? {
        for line in (RunCgroup.read("/proc/self/mountinfo") ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, fields[dash + 1] == "cgroup2",
                fields.count > 4
            {
                return String(fields[4])
            }
        }
        return nil
    }

    /// systemd marks a delegated cgroup with the `trusted.delegate` (root) or `user.delegate` xattr.
    static func isDelegated(_ path: String) -> Bool {
        ["trusted.delegate", "user.delegate"].contains { name in
            var value = [UInt8](repeating: 0, count: 8)
            let n = taskd_getxattr(path, name, &value, UInt(value.count))
            return n > 0 && value[0] == UInt8(ascii: "1")
        }
    }

    /// Run cgroups an earlier taskd left (it was killed): emptied and removed, but for `keeping`'s.
    static func removeStale(_ own: String, keeping: Set<String> = []) {
        guard let dir = opendir(own) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("run-"), !keeping.contains(String(name.dropFirst(4))) else { continue }
            _ = RunCgroup.write(own + "/" + name + "/cgroup.kill", "1")
            rmdir(own + "/" + name)
        }
    }
}
