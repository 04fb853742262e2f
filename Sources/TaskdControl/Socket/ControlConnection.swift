import CTaskdShim
import Synchronization
import TaskdIO
import TaskdProcess
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One client connection of the control socket. Bytes are read on the event loop's thread (never
/// on the cooperative pool) and framed into Varlink calls; each call is handed to the server's
/// `serve` on that thread, in order, with a `CallReply` to answer it through, now or later and from
/// any thread. Replies leave in the order of the calls (`ReplyOrder`), without blocking, buffering
/// at most `maxPendingOutput` bytes for a slow reader.
/// A connection idle past `idleTimeoutUSec`, or with a request unfinished past `requestTimeoutUSec`,
/// is closed by its server's sweep (`expire(now:)`).
public final class ControlConnection: Sendable {
    public static let maxPendingOutput = 4 * 1024 * 1024
    /// A reply this large (`List`, `Metrics` of thousands of tasks) gives its memory back once it
    /// is written: its output buffer is freed and malloc trimmed, else the heap it grew stays resident.
    static let largeReply = 256 * 1024
    /// The most bytes one read takes: a request is rarely longer, and a client over the 64 KiB limit
    /// by less than one read has sent everything when it is answered, so closing resets nothing.
    static let readSize = 16384

    public let peer: PeerCredentials

    private let fd: Int32
    private let state = Mutex(State())
    private let onClose: @Sendable (ControlConnection) -> Void
    private let onReject: @Sendable (PeerCredentials, String) -> Void
    private let limits: ConnectionLimits
    /// Tells the server this connection may expire at the given instant (CLOCK_MONOTONIC µs).
    private let onDeadline: @Sendable (UInt64) -> Void
    /// Serves a call; it answers through the `CallReply` it is given.
    private let serve: @Sendable (VarlinkCall, CallReply) -> Void

    private struct State: Sendable {
        var framer = VarlinkFramer()
        var pending: [UInt8] = []
        var token: UInt64?
        var closed = false
        var reading = true
        var waitingToWrite = false
        var closeAfterFlush = false
        /// The calls awaiting replies, and the replies waiting for earlier calls' (`more` calls
        /// stream until their final reply).
        var replies = ReplyOrder()

        /// A large reply was queued: trim the heap once the output is written.
        var trimAfterFlush = false

        /// Appends `bytes` to the output unless the connection is closed (nil); true if the output
        /// is now over `maxPendingOutput` (a reader too slow: the connection is to be closed).
        mutating func queue(_ bytes: [UInt8]) -> Bool? {
            guard !closed else { return nil }
            if pending.isEmpty { pending = bytes } else { pending += bytes }  // the usual lone reply: no copy
            if bytes.count >= ControlConnection.largeReply { trimAfterFlush = true }
            return pending.count > ControlConnection.maxPendingOutput
        }
        var lastActivity: UInt64 = 0
        /// When the first byte of an unfinished request arrived.
        var partialSince: UInt64?

        /// When the connection expires: the unfinished request's timeout, else the idle timeout
        /// unless a call is in progress (a `wake --wait` may wait for hours).
        func deadline(_ limits: ConnectionLimits) -> UInt64? {
            if let partialSince { return partialSince &+ limits.requestTimeoutUSec }
            return replies.outstanding == 0 ? lastActivity &+ limits.idleTimeoutUSec : nil
        }
    }

    init(
        fd: Int32, peer: PeerCredentials, limits: ConnectionLimits,
        onReject: @escaping @Sendable (PeerCredentials, String) -> Void,
        onDeadline: @escaping @Sendable (UInt64) -> Void,
        serve: @escaping @Sendable (VarlinkCall, CallReply) -> Void,
        onClose: @escaping @Sendable (ControlConnection) -> Void
    ) {
        self.fd = fd
        self.serve = serve
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

    /// Queues `reply` to the call of `slot`; it is written once every earlier call has had its
    /// final reply, as the socket accepts it.
    func answer(_ slot: UInt64, _ reply: VarlinkReply) {
        var bytes = reply.encoded
        bytes.append(0)
        let (deadline, queued) = state.withLock { s -> (UInt64?, Bool?) in
            let ready = s.replies.answer(slot, bytes, final: !reply.continues)
            var deadline: UInt64?
            if !reply.continues {
                s.lastActivity = DeadlineTimer.now()
                if s.replies.outstanding == 0 { deadline = s.deadline(limits) }
            }
            // Nothing to write yet, unless the connection was to hang up once this reply was the last.
            if ready.isEmpty && !(s.closeAfterFlush && s.replies.outstanding == 0) { return (deadline, nil) }
            return (deadline, s.queue(ready))
        }
        if let deadline { onDeadline(deadline) }
        if let overflow = queued {
            if overflow { close() } else { flush() }
        }
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
        var calls: [(call: VarlinkCall, slot: UInt64?)] = []
        var failure: String?
        let now = DeadlineTimer.now()
        let deadline = state.withLock { s -> UInt64? in
            s.lastActivity = now
            s.framer.append(buffer)
            defer { s.partialSince = s.framer.pendingByteCount == 0 ? nil : (s.partialSince ?? now) }
            while failure == nil {
                do {
                    guard let message = try s.framer.next() else { break }
                    let call = try VarlinkCall(message: message)
                    // Its slot is taken now, in the order of the calls; a oneway call gets none.
                    calls.append((call, call.oneway ? nil : s.replies.open()))
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
        for (call, slot) in calls { serve(call, CallReply(connection: self, slot: slot)) }
        if let failure { reject(failure) }
    }

    /// The stream cannot be trusted past a broken or stalled message: answer it after the calls
    /// before it, stop reading, hang up once every reply is sent.
    private func reject(_ failure: String) {
        onReject(peer, failure)
        let slot = state.withLock { s -> UInt64 in
            s.reading = false
            s.closeAfterFlush = true
            s.partialSince = nil  // a client that never reads its answer is closed when idle
            return s.replies.open()
        }
        answer(slot, VarlinkReply.error(SchedulerInterface.invalidRequest, ["reason": .string(failure)]))
    }

    /// Writes what is pending; waits for writability (EPOLLOUT) when the socket is full.
    private func flush() {
        enum Next { case done, close, trim }
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
            if s.closeAfterFlush && s.replies.outstanding == 0 { return .close }
            guard s.trimAfterFlush else { return .done }
            s.trimAfterFlush = false
            s.pending = []  // its capacity, the size of the largest reply
            return .trim
        }
        switch next {
        case .done: break
        case .close: close()
        case .trim: Self.giveMemoryBack()
        }
    }

    /// Returns the free pages a large reply left in malloc's heap to the kernel (a few ms with a
    /// heap of tens of MiB: paid once per large reply, never on a wake's way).
    static func giveMemoryBack() { MallocArenas.trim() }

    private func events(_ s: State) -> UInt32 {
        (s.reading ? EventLoop.readable : 0) | (s.waitingToWrite ? EventLoop.writable : 0)
    }

    private func close() {
        let (token, trim) = state.withLock { s -> (UInt64??, Bool) in
            guard !s.closed else { return (nil, false) }
            s.closed = true
            s.pending = []
            return (.some(s.token), s.trimAfterFlush)
        }
        guard let token else { return }
        if let token { EventLoop.shared.deregister(fd: fd, token: token) }
        Glibc.close(fd)
        onClose(self)
        if trim { Self.giveMemoryBack() }
    }
}
