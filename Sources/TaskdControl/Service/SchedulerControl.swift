import TaskScheduling
import TaskdProtocol

/// What the control service drives (the daemon conforms): the access checks and the request
/// methods, isolated to the actor, whose executor is the event loop's thread.
public protocol SchedulerControl: Actor {
    /// The journal `MESSAGE_ID` a `Why` reason names.
    associatedtype ReasonMessageID: RawRepresentable<String>
    /// Why a `Reload` changed nothing.
    associatedtype ReloadError: ConfigurationErrors

    /// Throws (a `VarlinkErrorConvertible`) unless `peer` may use the socket at all.
    func checkAccess(_ peer: PeerCredentials) throws
    /// Throws unless `peer` may reload.
    func checkAdmin(_ peer: PeerCredentials) throws
    func wake(
        target: String, id: String?, payload: String?, peer: PeerCredentials,
        watch: (@Sendable (RunInfo) -> Void)?, followRetries: Bool,
        reply: @escaping @Sendable ([RunInfo]) -> Void
    ) throws
    func cancel(target: String, peer: PeerCredentials) throws -> [RunInfo]
    /// The runs by id; with `watch`, their later states (see `wake`).
    func follow(runIDs: [String], watch: (@Sendable (RunInfo) -> Void)?, followRetries: Bool) throws -> [RunInfo]
    func pause(target: String, until: UInt64?, note: String, peer: PeerCredentials) throws -> [String]
    func resume(target: String, peer: PeerCredentials) throws -> [String]
    func why(name: String) throws -> (TaskKey, [(WhyReason, ReasonMessageID?)])
    func metrics(prometheus: Bool) -> [UInt8]
    func list() -> [TaskInfo]
    func status(name: String) throws -> TaskInfo
    func history(name: String, limit: Int) throws -> [RunInfo]
    func reload() async -> Result<ReloadDiff, ReloadError>
    /// Runs `body` on the actor, synchronously: the caller is on the actor's executor already.
    nonisolated func isolatedOnLoop<T: Sendable>(_ body: (isolated Self) throws -> T) rethrows -> T
}
