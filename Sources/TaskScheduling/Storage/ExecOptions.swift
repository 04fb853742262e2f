/// A command's settings beyond its argv, each read and written as a property of `CommandSpec`
/// (`command.environment`): the same in most commands of a configuration, so that `SharedValues`
/// stores them once for all of them.
public struct ExecOptions: Hashable, Sendable {
    /// `NAME=value` assignments added to the handler's environment, in order (later ones win).
    public var environment: [String]
    /// `WorkingDirectory=`: where the command starts (nil: taskd's own).
    public var workingDirectory: String?
    /// Sent to the command's process group when cancellation is signalled (default SIGTERM).
    public var killSignal: Int32
    /// `User=`, `Group=`, `SupplementaryGroups=`, `UMask=`, `Nice=`: who the command runs as and how.
    public var identity: ExecIdentity
    /// `LogRateLimitIntervalSec=`, `LogRateLimitBurst=`: how many output lines per interval reach the journal.
    public var outputLimit: OutputRateLimit
    /// `MemoryMax=` and the other resource keys, applied to the run's cgroup.
    public var limits = ResourceLimits()
}
