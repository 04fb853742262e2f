@preconcurrency import Dispatch
import CTaskdShim
import Synchronization
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One client connection of the control socket. Bytes are read by a Dispatch source (never on
/// the cooperative pool), framed into Varlink calls and handed on in order through `calls`;
/// replies are written without blocking, buffering at most `maxPendingOutput` bytes for a slow reader.
public final class ControlConnection: ReplyChannel, Sendable {
    public static let maxPendingOutput = 4 * 1024 * 1024

    public let peer: PeerCredentials
    /// The calls the client sent, in order; finishes when the client hangs up or breaks the protocol.
    public let calls: AsyncStream<VarlinkCall>

    private let fd: Int32
    private let queue: DispatchQueue
    private let continuation: AsyncStream<VarlinkCall>.Continuation
    private let state: Mutex<State>
    private let onClose: @Sendable (ControlConnection) -> Void

    private struct State: @unchecked Sendable {
        var framer = VarlinkFramer()
        var pending: [UInt8] = []
        var readSource: (any DispatchSourceRead)?
        var writeSource: (any DispatchSourceWrite)?
        var closed = false
        var closeAfterFlush = false
        var onewayPending = 0
    }

    init(fd: Int32, peer: PeerCredentials, onClose: @escaping @Sendable (ControlConnection) -> Void) {
        self.fd = fd
        self.peer = peer
        self.onClose = onClose
        self.queue = DispatchQueue(label: "taskd.connection.\(fd)")
        (calls, continuation) = AsyncStream.makeStream(of: VarlinkCall.self)
        state = Mutex(State())
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { @Sendable [self] in self.readAvailable() }
        state.withLock { $0.readSource = source }
        source.resume()
    }

    /// Queues a reply; written as the socket accepts it.
    public func send(_ reply: VarlinkReply) {
        queue.async { [self] in
            let oneway = state.withLock { s -> Bool in
                guard s.onewayPending > 0 else { return false }
                if !reply.continues { s.onewayPending -= 1 }
                return true
            }
            if !oneway { self.write(reply.encoded + [0]) }
        }
    }

    /// Marks the next call as oneway: its replies are dropped (Varlink `"oneway": true`).
    func expectOneway() { state.withLock { $0.onewayPending += 1 } }

    /// Closes the connection once everything queued has been written.
    public func closeAfterFlush() {
        queue.async { [self] in
            let done = state.withLock { s -> Bool in
                s.closeAfterFlush = true
                return s.pending.isEmpty
            }
            if done { self.close() }
        }
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            return close()
        }
        if n == 0 { return close() }
        var calls: [VarlinkCall] = []
        var failure: String?
        state.withLock { s in
            s.framer.append(buffer[0..<n])
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
        }
        calls.forEach { continuation.yield($0) }
        if let failure {
            // The stream cannot be trusted past a broken message: answer, then hang up.
            state.withLock { s in
                s.readSource?.cancel()
                s.readSource = nil
            }
            rejected(failure)
            write(VarlinkReply.error(SchedulerInterface.invalidRequest, ["reason": .string(failure)]).encoded + [0])
            continuation.finish()
            closeAfterFlush()
        }
    }

    /// Called when a request is refused at the framing level; the server logs it.
    var onReject: (@Sendable (PeerCredentials, String) -> Void)? {
        get { rejectHandler.withLock { $0 } }
        set { rejectHandler.withLock { $0 = newValue } }
    }
    private let rejectHandler = Mutex<(@Sendable (PeerCredentials, String) -> Void)?>(nil)
    private func rejected(_ reason: String) { onReject?(peer, reason) }

    private func write(_ bytes: [UInt8]) {
        let overflow = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.pending += bytes
            return s.pending.count > Self.maxPendingOutput
        }
        if overflow { return close() }
        flush()
    }

    private func flush() {
        while true {
            let (chunk, closed) = state.withLock { ($0.pending, $0.closed) }
            if closed { return }
            if chunk.isEmpty {
                let shouldClose = state.withLock { s -> Bool in
                    s.writeSource?.cancel()
                    s.writeSource = nil
                    return s.closeAfterFlush
                }
                if shouldClose { close() }
                return
            }
            let n = chunk.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                state.withLock { $0.pending.removeFirst(n) }
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                let needsSource = state.withLock { $0.writeSource == nil }
                if needsSource {
                    let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
                    source.setEventHandler { @Sendable [self] in self.flush() }
                    state.withLock { $0.writeSource = source }
                    source.resume()
                }
                return
            }
            return close()
        }
    }

    private func close() {
        let sources = state.withLock { s -> [any DispatchSourceProtocol]? in
            guard !s.closed else { return nil }
            s.closed = true
            s.pending.removeAll()
            let list: [any DispatchSourceProtocol] = [s.readSource, s.writeSource].compactMap { $0 }
            s.readSource = nil
            s.writeSource = nil
            return list
        }
        guard let sources else { return }
        sources.forEach { $0.cancel() }
        continuation.finish()
        let fd = self.fd
        // Close the fd after the sources are gone, on this queue, so no handler sees a reused fd.
        queue.async { Glibc.close(fd) }
        onClose(self)
    }
}
