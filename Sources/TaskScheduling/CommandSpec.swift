/// How to run a command handler: argv (no shell), environment additions, working directory,
/// cancel signal, identity and the output rate limit.
public struct CommandSpec: Hashable, Sendable {
    public var argv: [String]
    /// `NAME=value` assignments added to the handler's environment, in order (later ones win).
    public var environment: [String]
    public var workingDirectory: String?
    /// Sent to the command's process group when cancellation is signalled (default SIGTERM).
    public var killSignal: Int32
    public var identity: ExecIdentity
    public var outputLimit: OutputRateLimit

    public init(
        argv: [String], environment: [String] = [], workingDirectory: String? = nil, killSignal: Int32 = 15,
        identity: ExecIdentity = ExecIdentity(), outputLimit: OutputRateLimit = .standard
    ) {
        self.argv = argv
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.killSignal = killSignal
        self.identity = identity
        self.outputLimit = outputLimit
    }
}
