import Synchronization
import TaskdIO
import TaskdProtocol

/// Journals connections refused over a limit without letting a flood flood the journal: the first
/// refusal is journaled at once, later ones are counted and journaled together, at most one entry
/// per `window` (the count rides on the next refusal after the window).
final class RefusalReporter: Sendable {
    private let journal: EventJournal
    private let window: UInt64
    private let state = Mutex<(lastReport: UInt64?, unreported: Int)>((nil, 0))

    init(journal: EventJournal, windowUSec: UInt64 = 10_000_000) {
        self.journal = journal
        self.window = windowUSec
    }

    func refused(_ peer: PeerCredentials, _ reason: String) {
        let now = DeadlineTimer.now()
        let count = state.withLock { s -> Int? in
            s.unreported += 1
            if let last = s.lastReport, now - last < window { return nil }
            defer { s = (now, 0) }
            return s.unreported
        }
        guard let count else { return }
        journal.daemon(
            .requestRejected, 4,
            "refused \(count) connection(s), the latest from \(peer): \(reason)",
            [
                ("PEER_PID", String(peer.pid)), ("PEER_UID", String(peer.uid)),
                ("TASKD_REFUSED_CONNECTIONS", String(count)),
            ])
    }
}
