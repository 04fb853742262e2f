import TaskdProtocol

/// Answers one call of a `ControlConnection`, from any thread, now or later: its replies leave in
/// the order of the connection's calls. Replies to a oneway call, or after the client has gone, vanish.
public struct CallReply: ReplyChannel {
    let connection: ControlConnection
    /// The call's place in the connection's reply order; nil for a oneway call.
    let slot: UInt64?

    public var peer: PeerCredentials { connection.peer }
    public var isClosed: Bool { connection.isClosed }

    public func send(_ reply: VarlinkReply) {
        guard let slot else { return }
        connection.answer(slot, reply)
    }
}

/// Where a method handler sends its replies; replies to a closed connection or a oneway call vanish.
public protocol ReplyChannel: Sendable {
    /// Who called (from SO_PEERCRED).
    var peer: PeerCredentials { get }
    /// True once the client has gone; a streaming handler stops then.
    var isClosed: Bool { get }
    func send(_ reply: VarlinkReply)
}
