import TaskScheduling

/// The `[Daemon]` section of `taskd.conf`; command-line options override it.
public struct DaemonSettings: Hashable, Sendable {
    /// `StateDirectory=`: where taskd keeps its state and where handlers find `$STATE_DIRECTORY`.
    public var stateDirectory: String?
    /// `Socket=`: the control socket's path when taskd is not socket-activated.
    public var socketPath: String?
    /// `MaxConcurrentRuns=`: how many handlers may run at once (nil: the number of CPUs).
    public var maxConcurrentRuns: Int?
    /// `AllowUsers=`/`AllowGroups=`: who besides root may use the control socket (nil: whoever can connect).
    public var access: AccessList?
    /// `SubmitUsers=`/`SubmitGroups=`: who besides root and taskd's own user may submit transient
    /// tasks (nil: no one else).
    public var submitAccess: AccessList?
    /// `MaxConnections=`, `MaxConnectionsPerUser=`: open control-socket connections allowed (nil: default).
    public var maxConnections: Int?
    public var maxConnectionsPerUser: Int?
    /// `IdleTimeoutSec=`, `RequestTimeoutSec=`: when a quiet connection, and an unfinished request, are closed.
    public var idleTimeout: TimeSpan?
    public var requestTimeout: TimeSpan?
    /// `SyncIntervalSec=`: how long a written wake may wait for its fdatasync; 0: its reply waits for it (nil: 1 s).
    public var syncInterval: TimeSpan?

    /// `WatchSleep=`: take logind's sleep delay inhibitor and cancel runs before the system sleeps (nil: yes).
    public var watchSleep: Bool?
    /// `RunCgroups=`: `auto` (when systemd delegated taskd's cgroup), `yes` or `no` (nil: auto).
    public var runCgroups: String?
    /// `RunKeeper=`: command runs spawned by `taskd-keeper`, so that they outlive taskd (nil: no).
    public var runKeeper: Bool?
    /// `FleetEndpoints=` and the other `Fleet…=` keys: the etcd cluster of `Fleet=once`/`max:N` tasks.
    public var fleet = FleetSettings()
    /// `MetricsFile=`: where taskd keeps its metrics for node_exporter's textfile collector (nil: nowhere).
    public var metricsFile: String?

    public init(stateDirectory: String? = nil, socketPath: String? = nil) {
        self.stateDirectory = stateDirectory
        self.socketPath = socketPath
    }
}

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonSettings {
    /// `MaxConcurrentRuns=`, or the number of online CPUs.
    public var effectiveMaxConcurrentRuns: Int {
        maxConcurrentRuns ?? max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
