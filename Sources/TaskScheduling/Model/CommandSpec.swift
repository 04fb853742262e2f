/// How to run a command handler: argv (no shell), environment additions, working directory,
/// cancel signal, identity and the output rate limit. The argv is stored inline; the rest sits in
/// one shared, copy-on-write `ExecOptions` (16 bytes per command instead of 144), whose fields
/// read and write as the command's own properties (`command.environment`).
@dynamicMemberLookup
public struct CommandSpec: Hashable, Sendable {
    public var argv: [String]
    @usableFromInline @Indirect var options: ExecOptions

    /// Every `ExecOptions` field, read and written in place as a property of the command
    /// (`command.environment`); the first write to shared options copies them (copy on write).
    @inlinable
    public subscript<Value>(dynamicMember path: WritableKeyPath<ExecOptions, Value>) -> Value {
        _read { yield options[keyPath: path] }
        _modify { yield &options[keyPath: path] }
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
