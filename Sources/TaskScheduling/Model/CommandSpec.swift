/// How to run a command handler: argv (no shell), environment additions, working directory,
/// cancel signal, identity and the output rate limit. The argv is stored inline; the rest sits in
/// one shared, copy-on-write `ExecOptions` (16 bytes per command instead of 144).
public struct CommandSpec: Hashable, Sendable {
    public var argv: [String]
    @Indirect var options: ExecOptions

    /// `NAME=value` assignments added to the handler's environment, in order (later ones win).
    public var environment: [String] {
        get { options.environment }
        set { options.environment = newValue }
    }
    public var workingDirectory: String? {
        get { options.workingDirectory }
        set { options.workingDirectory = newValue }
    }
    /// Sent to the command's process group when cancellation is signalled (default SIGTERM).
    public var killSignal: Int32 {
        get { options.killSignal }
        set { options.killSignal = newValue }
    }
    public var identity: ExecIdentity {
        get { options.identity }
        set { options.identity = newValue }
    }
    public var outputLimit: OutputRateLimit {
        get { options.outputLimit }
        set { options.outputLimit = newValue }
    }
    /// `MemoryMax=` and the other resource keys, applied to the run's cgroup.
    public var limits: ResourceLimits {
        get { options.limits }
        set { options.limits = newValue }
    }

    public init(
        argv: [String], environment: [String] = [], workingDirectory: String? = nil, killSignal: Int32 = 15,
        identity: ExecIdentity = ExecIdentity(), outputLimit: OutputRateLimit = .standard
    ) {
        self.argv = argv
        self.options = ExecOptions(
            environment: environment, workingDirectory: workingDirectory, killSignal: killSignal, identity: identity,
            outputLimit: outputLimit)
    }
}
