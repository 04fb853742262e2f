import CTaskdShim
import Synchronization
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One client connection of the control socket. Bytes are read on the event loop's thread (never
/// on the cooperative pool) and framed into Varlink calls. A lone call with none in progress is
/// offered to the server's `serveAtOnce` on that thread; the others are handed on in order through
/// `calls`, and the connection to a serving task, only once no call served at once is unanswered,
/// so that replies keep the calls' order. Replies are written without blocking, buffering at most
/// `maxPendingOutput` bytes for a slow reader.
/// A connection idle past `idleTimeoutUSec`, or with a request unfinished past `requestTimeoutUSec`,
/// is closed by its server's sweep (`expire(now:)`).
public final class ControlConnection: ReplyChannel, Sendable {
    public static let maxPendingOutput = 4 * 1024 * 1024
    /// The most bytes one read takes: a request is rarely longer, and a client over the 64 KiB limit
    /// by less than one read has sent everything when it is answered, so closing resets nothing.
    static let readSize = 16384

    public let peer: PeerCredentials
    /// The calls the client sent that were not served at once, in order; finishes when the client
    /// hangs up or breaks the protocol.
    public var calls: AsyncStream<VarlinkCall> { queue.withLock { $0.stream() } }

    private let fd: Int32
    /// Made on first use: a connection whose calls are all served at once never needs one.
    private let queue = Mutex(CallQueue())
    private let state = Mutex(State())
    private let onClose: @Sendable (ControlConnection) -> Void
    private let onReject: @Sendable (PeerCredentials, String) -> Void
    private let limits: ConnectionLimits
    /// Tells the server this connection may expire at the given instant (CLOCK_MONOTONIC µs).
    private let onDeadline: @Sendable (UInt64) -> Void
    /// Serves a call at once if it can (it replies through `send`); false leaves it to `calls`.
    private let serveAtOnce: @Sendable (VarlinkCall, ControlConnection) -> Bool
    /// Gives the connection to a task that serves `calls`; called at most once.
    private let onHandOver: @Sendable (ControlConnection) -> Void

    private struct State: Sendable {
        var framer = VarlinkFramer()
        var pending: [UInt8] = []
        var token: UInt64?
        var closed = false
        var reading = true
        var waitingToWrite = false
        var closeAfterFlush = false
        var onewayPending = 0
        /// Calls answered by no final reply yet (`more` calls stream until theirs).
        var outstanding = 0
        var sequencer = CallSequencer()

        /// Appends `bytes` to the output unless the connection is closed (nil); true if the output
        /// is now over `maxPendingOutput` (a reader too slow: the connection is to be closed).
        mutating func queue(_ bytes: [UInt8]) -> Bool? {
            guard !closed else { return nil }
            pending += bytes
            return pending.count > ControlConnection.maxPendingOutput
        }
        var lastActivity: UInt64 = 0
        /// When the first byte of an unfinished request arrived.
        var partialSince: UInt64?

        /// When the connection expires: the unfinished request's timeout, else the idle timeout
        /// unless a call is in progress (a `wake --wait` may wait for hours).
        func deadline(_ limits: ConnectionLimits) -> UInt64? {
            if let partialSince { return partialSince &+ limits.requestTimeoutUSec }
            return outstanding == 0 ? lastActivity &+ limits.idleTimeoutUSec : nil
        }
    }

    init(
        fd: Int32, peer: PeerCredentials, limits: ConnectionLimits,
        onReject: @escaping @Sendable (PeerCredentials, String) -> Void,
        onDeadline: @escaping @Sendable (UInt64) -> Void,
        serveAtOnce: @escaping @Sendable (VarlinkCall, ControlConnection) -> Bool,
        onHandOver: @escaping @Sendable (ControlConnection) -> Void,
        onClose: @escaping @Sendable (ControlConnection) -> Void
    ) {
        self.fd = fd
        self.serveAtOnce = serveAtOnce
        self.onHandOver = onHandOver
        self.peer = peer
        self.limits = limits
        self.onReject = onReject
        self.onDeadline = onDeadline
        self.onClose = onClose
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Reads the request a client sends right after connecting at once, not a turn of the loop
    /// later, and watches the socket only once the handlers that request starts have started (from
    /// the loop: one `epoll_ctl` fewer before a wake's handler). Until then nothing is lost: epoll is
    /// level-triggered, and a reply the socket does not take yet waits in `pending`.
    func start() {
        let now = DeadlineTimer.now()
        state.withLock { $0.lastActivity = now }
        readAvailable(EventLoop.readable)
        EventLoop.shared.afterHandlerJobs { [self] in watch() }
    }

    /// Registers the socket with the loop for what `state` waits for, unless it was closed meanwhile
    /// (its fd may be another connection's by now).
    private func watch() {
        enum Outcome { case closed, failed, watching(deadline: UInt64?) }
        // Under the lock: a reply flushed meanwhile on another thread either finds the token or
        // has set `waitingToWrite` before the registration reads it.
        let outcome = state.withLock { s -> Outcome in
            guard !s.closed else { return .closed }
            let token = EventLoop.shared.register(fd: fd, events: events(s)) { [self] events in
                if events & EventLoop.writable != 0 { self.flush() }
                if events & (EventLoop.readable | EventLoop.hangup) != 0 { self.readAvailable(events) }
            }
            guard let token else { return .failed }
            s.token = token
            return .watching(deadline: s.deadline(limits))
        }
        switch outcome {
        case .closed: break
        case .failed: close()
        case .watching(let deadline): if let deadline { onDeadline(deadline) }
        }
    }

    /// The server's sweep: closes the connection if its deadline has passed (an unfinished request
    /// is answered `InvalidRequest` first); returns its next deadline, nil if none or closed.
    func expire(now: UInt64) -> UInt64? {
        enum Verdict { case live(UInt64?), idle, slowRequest }
        let verdict = state.withLock { s -> Verdict in
            guard !s.closed, let deadline = s.deadline(limits) else { return .live(nil) }
            guard deadline <= now else { return .live(deadline) }
            return s.partialSince == nil ? .idle : .slowRequest
        }
        switch verdict {
        case .live(let deadline): return deadline
        case .idle: close()
        case .slowRequest:
            reject("request not completed within \(limits.requestTimeoutUSec / 1_000_000) s")
        }
        return nil
    }

    /// Queues a reply; it is written as the socket accepts it. Replies to a oneway call are dropped.
    public func send(_ reply: VarlinkReply) {
        let bytes = reply.encoded + [0]
        // The reply is queued in the same step that tells the sequencer it was answered: a call read
        // meanwhile (on the loop's thread, this reply coming from another) may go to a task as soon
        // as the answer is known, and its reply must not be queued ahead of this one.
        let (deadline, handOver, queued) = state.withLock { s -> (UInt64?, Bool, Bool?) in
            var result: (deadline: UInt64?, handOver: Bool, oneway: Bool) = (nil, false, false)
            if reply.continues {
                // A continued reply answers a `more` call that stays in progress (or a oneway one: dropped).
                result.oneway = s.onewayPending > 0
            } else {
                s.lastActivity = DeadlineTimer.now()
                let (atOnce, handOver) = s.sequencer.answered()
                if !atOnce && s.onewayPending > 0 {
                    s.onewayPending -= 1
                    result.oneway = true
                } else {
                    s.outstanding = max(0, s.outstanding - 1)
                    result = (s.outstanding == 0 ? s.deadline(limits) : nil, handOver, false)
                }
            }
            return (result.deadline, result.handOver, result.oneway ? nil : s.queue(bytes))
        }
        if let deadline { onDeadline(deadline) }
        if let overflow = queued {
            if overflow { close() } else { flush() }
        }
        // Only now: the calls that waited are answered after this one.
        if handOver { onHandOver(self) }
    }

    private func readAvailable(_ events: UInt32) {
        guard state.withLock({ $0.reading }) else {
            if events & EventLoop.hangup != 0 { close() }
            return
        }
        // Into a buffer on the stack, then only the bytes read are copied: a 16 KiB array allocated per
        // read cost 10 µs of a wake's way here. A longer message is read over several turns of the loop.
        var n = 0
        var readError: Int32 = 0
        let buffer = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.readSize) { bytes in
            n = recv(fd, bytes.baseAddress, bytes.count, 0)
            readError = n < 0 ? errno : 0
            return n > 0 ? Array(bytes[..<n]) : []
        }
        if n < 0 {
            if readError == EAGAIN || readError == EINTR { return }
            return close()
        }
        if n == 0 { return close() }
        var calls: [VarlinkCall] = []
        var failure: String?
        let now = DeadlineTimer.now()
        let deadline = state.withLock { s -> UInt64? in
            s.lastActivity = now
            s.framer.append(buffer)
            defer {
                s.partialSince = s.framer.pendingByteCount == 0 ? nil : (s.partialSince ?? now)
                s.outstanding += calls.filter { !$0.oneway }.count
            }
            while failure == nil {
                do {
                    guard let message = try s.framer.next() else { break }
                    let call = try VarlinkCall(message: message)
                    if call.oneway { s.onewayPending += 1 }
                    calls.append(call)
                } catch let e as VarlinkFramingError {
                    failure = e.description
                } catch let e as VarlinkCallError {
                    failure = e.reason
                } catch {
                    failure = "\(error)"
                }
            }
            return s.framer.pendingByteCount == 0 ? nil : (s.partialSince ?? now) &+ limits.requestTimeoutUSec
        }
        if let deadline { onDeadline(deadline) }
        deliver(calls)
        if let failure { reject(failure) }
    }

    /// Serves a lone call at once when no call is in progress; else queues the calls in `calls`,
    /// handing the connection over if no call served at once is still unanswered.
    private func deliver(_ calls: [VarlinkCall]) {
        guard !calls.isEmpty else { return }
        // Offered before serving: the reply may come back at once, from inside `serveAtOnce`.
        if calls.count == 1 && !calls[0].oneway && state.withLock({ $0.sequencer.offer() }) {
            if serveAtOnce(calls[0], self) { return }
            state.withLock { $0.sequencer.declined() }
        }
        let handOver = state.withLock { $0.sequencer.queued() }
        queue.withLock { q in calls.forEach { q.yield($0) } }
        if handOver { onHandOver(self) }
    }

    /// The stream cannot be trusted past a broken or stalled message: answer, stop reading, hang up once sent.
    private func reject(_ failure: String) {
        onReject(peer, failure)
        state.withLock {
            $0.reading = false
            $0.closeAfterFlush = true
            $0.partialSince = nil  // a client that never reads its answer is closed when idle
        }
        queue.withLock { $0.finish() }
        write(VarlinkReply.error(SchedulerInterface.invalidRequest, ["reason": .string(failure)]).encoded + [0])
    }

    private func write(_ bytes: [UInt8]) {
        guard let overflow = state.withLock({ $0.queue(bytes) }) else { return }
        if overflow { close() } else { flush() }
    }

    /// Writes what is pending; waits for writability (EPOLLOUT) when the socket is full.
    private func flush() {
        enum Next { case done, close }
        let next: Next = state.withLock { s in
            while !s.closed && !s.pending.isEmpty {
                let n = s.pending.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 {
                    s.pending.removeFirst(n)
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    if !s.waitingToWrite {
                        s.waitingToWrite = true
                        // Not yet watched: `watch` registers for writability too.
                        if let token = s.token { EventLoop.shared.modify(fd: fd, token: token, events: events(s)) }
                    }
                    return .done
                }
                return .close
            }
            if s.waitingToWrite {
                s.waitingToWrite = false
                if let token = s.token { EventLoop.shared.modify(fd: fd, token: token, events: events(s)) }
            }
            return s.closeAfterFlush ? .close : .done
        }
        if case .close = next { close() }
    }

    private func events(_ s: State) -> UInt32 {
        (s.reading ? EventLoop.readable : 0) | (s.waitingToWrite ? EventLoop.writable : 0)
    }

    private func close() {
        let token = state.withLock { s -> UInt64?? in
            guard !s.closed else { return nil }
            s.closed = true
            s.pending.removeAll()
            return .some(s.token)
        }
        guard let token else { return }
        if let token { EventLoop.shared.deregister(fd: fd, token: token) }
        Glibc.close(fd)
        queue.withLock { $0.finish() }
        onClose(self)
    }
}
