/// A command's settings beyond its argv: the same in most commands of a configuration, so that
/// `SharedValues` stores them once for all of them.
struct ExecOptions: Hashable, Sendable {
    var environment: [String]
    var workingDirectory: String?
    var killSignal: Int32
    var identity: ExecIdentity
    var outputLimit: OutputRateLimit
    var limits = ResourceLimits()
}
