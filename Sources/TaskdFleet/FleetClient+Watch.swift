import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The watch of the fleet's claims: one long-lived gRPC `Watch` stream of the deletions under
/// `/taskd/NAME/claims/`, on a thread of its own. A claim deleted (its lease expired, or its holder
/// gave it back) of a slot lost to another host is looked at at once, and offered back
/// (`takeOver`) if the slot is not done; a `max:N` key deleted wakes the task's waiters. A stream
/// that ends is made again at the next member, from the revision after the last one seen; while
/// none is up, the slower poll (`poll`) looks instead.
extension FleetClient {
    /// Starts the watch's thread (once: `startTimers` calls it).
    func startWatch() {
        // No thread: the poll looks instead, for as long as the client lives.
        if !Thread.detach({ [self] in watchLoop() }) { startPolling() }
    }

    /// Keeps a watch stream up until the client stops.
    private func watchLoop() {
        let connection = HTTPConnection(etcd.settings)
        var member = etcd.preferred.withLock { $0 }
        var next: Int64 = 0
        while !state.withLock({ $0.stopped }) {
            if let connection { next = watchOnce(connection, member: member, from: next) }
            let wasUp = state.withLock { s -> Bool in
                defer { s.watchUp = false }
                return s.watchUp
            }
            // Lost: the slower poll looks while the watch is down; the member the calls use now is
            // tried next, or the one after this one if that is this one.
            if wasUp || connection == nil { startPolling() }
            let preferred = etcd.preferred.withLock { $0 }
            member = preferred != member ? preferred : (member + 1) % etcd.endpoints.count
            usleep(wasUp ? 50_000 : 1_000_000)
        }
    }

    /// One watch stream at member `member` from revision `from` (0: now), until it ends: the
    /// revision to go on from.
    private func watchOnce(_ connection: HTTPConnection, member: Int, from: Int64) -> Int64 {
        var next = from
        var buffer: [UInt8] = []
        // etcd found unreachable by a call: a member cut off from its quorum keeps its streams open
        // but quiet, so the watch is made again where the calls go (and the poll looks meanwhile).
        let generation = state.withLock { $0.watchGeneration }
        let request = EtcdRequest.watchDeletions(prefix: base + "/claims/", from: from)
        guard let message = Protobuf.encode(request.body, as: request.message) else { return from }
        _ = connection.post(
            etcd.endpoints[member] + request.path, Protobuf.frame(message), timeoutMS: 0,
            connectTimeoutMS: etcd.connectTimeoutMS
        ) { piece in
            if state.withLock({ $0.stopped || $0.watchGeneration != generation }) { return false }
            guard let piece else { return true }
            buffer.append(contentsOf: piece)
            for frame in Protobuf.frames(&buffer) {
                guard let frame, let answer = Protobuf.decode(frame, as: request.answer), handle(answer, next: &next)
                else { return false }
            }
            return buffer.count < 16 << 20
        }
        return next
    }

    /// One message of the stream (a `WatchResponse`); false when the stream is to be made again.
    func handle(_ result: JSONValue, next: inout Int64) -> Bool {
        let revision = EtcdRequest.int(result["header"]?["revision"]) ?? 0
        if let compacted = EtcdRequest.int(result["compact_revision"]), compacted > 0 {
            next = 0  // the revisions missed are gone: from now, after a look at everything
            return false
        }
        if result["canceled"]?.boolValue == true { return false }
        if result["created"]?.boolValue == true {
            if next == 0 { next = revision + 1 }
            state.withLock { s in
                s.watchUp = true
                s.watchRevision = max(s.watchRevision, revision)
            }
            // What was deleted while no watch was up (or before this one began): one look.
            if !lookAtAll() { lookAgainSoon() }
            return true
        }
        for event in result["events"]?.arrayValue ?? [] where event["type"]?.stringValue == "DELETE" {
            let kv = event["kv"]
            let modified = EtcdRequest.int(kv?["mod_revision"]) ?? revision
            next = max(next, modified + 1)
            guard let key = kv?["key"]?.stringValue.flatMap(Base64.decodeText) else { continue }
            deleted(key, at: modified)
        }
        return true
    }

    /// A claim's key was deleted at `revision`: a watched slot is looked at, a `max:N` task's
    /// waiters are woken.
    private func deleted(_ key: String, at revision: Int64) {
        let parts = key.dropFirst(base.count + "/claims/".count).split(separator: "/")
        guard parts.count == 3 else { return }
        let task = String(parts[1])
        let (slot, waited) = state.withLock { s -> (UInt64?, Bool) in
            s.watchRevision = max(s.watchRevision, revision)
            let slot =
                parts[0] == "once" ? UInt64(parts[2]).flatMap { s.watched[task]?.contains($0) == true ? $0 : nil } : nil
            return (slot, parts[0] == "max" && s.waiting.values.contains { $0.task == task })
        }
        // etcd did not answer the look: the deletion is not told again, so the look is made again.
        let answered = (slot.map { look(task, $0) } ?? true) && (!waited || checkWaiting(task))
        if !answered { lookAgainSoon() }
    }

    /// Starts the poll if it is not running and something waits for it.
    private func startPolling() {
        let start = state.withLock { s -> Bool in
            guard !s.polling, !s.stopped, !(s.watched.isEmpty && s.waiting.isEmpty) else { return false }
            s.polling = true
            return true
        }
        if start { schedulePoll() }
    }
}
