import TaskdControl
import TaskdProtocol

/// The control service's log in the journal: each request at debug, each rejection at warning.
struct JournalControlLog: ControlLog {
    let journal: EventJournal

    func request(_ method: String, from peer: PeerCredentials) {
        journal.daemon(.request, 7) {
            (
                "request \(method) from \(peer)",
                [
                    ("REQUEST_METHOD", method), ("PEER_PID", String(peer.pid)), ("PEER_UID", String(peer.uid)),
                    ("PEER_GID", String(peer.gid)),
                ]
            )
        }
    }

    func rejected(_ method: String, from peer: PeerCredentials, reason: String) {
        journal.daemon(
            .requestRejected, 4, "rejected \(method) from \(peer): \(reason)",
            [("REQUEST_METHOD", method), ("PEER_PID", String(peer.pid)), ("PEER_UID", String(peer.uid))])
    }
}
