import TaskdProtocol

/// Where the control service tells of its calls: every request (debug), and every one it rejects.
public protocol ControlLog: Sendable {
    func request(_ method: String, from peer: PeerCredentials)
    func rejected(_ method: String, from peer: PeerCredentials, reason: String)
}
