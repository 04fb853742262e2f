/// What the control socket allows each client (`[Daemon]` keys of taskd.conf), so that no client,
/// hostile or broken, can exhaust taskd's file descriptors or memory or hold others out.
public struct ConnectionLimits: Hashable, Sendable {
    /// `MaxConnections=`: open client connections in all; more are refused with `TooManyConnections`.
    public var maxConnections: Int
    /// `MaxConnectionsPerUser=`: open connections of one uid other than root.
    public var maxConnectionsPerUser: Int
    /// `IdleTimeoutSec=`: a connection with no call in progress and no bytes for this long is closed.
    public var idleTimeoutUSec: UInt64
    /// `RequestTimeoutSec=`: a request begun but not ended (no NUL) this long after its first byte
    /// gets `InvalidRequest` and the connection is closed (a client sending a byte a second).
    public var requestTimeoutUSec: UInt64

    public static let defaults = ConnectionLimits(
        maxConnections: 512, maxConnectionsPerUser: 128, idleTimeoutUSec: 60_000_000, requestTimeoutUSec: 10_000_000)

    public init(maxConnections: Int, maxConnectionsPerUser: Int, idleTimeoutUSec: UInt64, requestTimeoutUSec: UInt64) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerUser = maxConnectionsPerUser
        self.idleTimeoutUSec = idleTimeoutUSec
        self.requestTimeoutUSec = requestTimeoutUSec
    }
}
