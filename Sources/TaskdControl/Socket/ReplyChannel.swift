import TaskdProtocol

/// Where a method handler sends its replies; replies to a closed connection or a oneway call vanish.
public protocol ReplyChannel: Sendable {
    /// Who called (from SO_PEERCRED).
    var peer: PeerCredentials { get }
    /// True once the client has gone; a streaming handler stops then.
    var isClosed: Bool { get }
    func send(_ reply: VarlinkReply)
}
