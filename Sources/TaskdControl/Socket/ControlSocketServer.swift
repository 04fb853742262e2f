import CTaskdShim
import Synchronization
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket: a listening Unix stream socket (its own, or one passed by socket activation).
/// Accepting and reading run on the event loop, which hands every call to `start(serve:)`'s closure
/// (see `ControlConnection`).
/// It enforces `ConnectionLimits`: a connection over a limit is answered `TooManyConnections` and
/// closed at once; one timerfd, armed only while connections are open, closes idle and stalled ones.
public final class ControlSocketServer: Sendable {
    /// The path clients connect to (for an activated socket, the one it is bound to).
    public let path: String
    /// True when the socket came from the service manager.
    public let isActivated: Bool

    private let listenFD: Int32
    private let token = Mutex<UInt64?>(nil)
    private let open = Mutex<[ObjectIdentifier: ControlConnection]>([:])
    private let onReject: @Sendable (PeerCredentials, String) -> Void
    private let onRefuse: @Sendable (PeerCredentials, String) -> Void
    private let limits: ConnectionLimits
    private let sweeper = Mutex<(timer: DeadlineTimer?, armedAt: UInt64?, acceptPaused: Bool)>((nil, nil, false))

    /// Uses the socket-activated fd when there is one, else binds `path` (mode 0660, directory
    /// created 0755). A live socket at `path` is an error (another daemon serves it); a stale one is replaced.
    /// `onReject` hears of every broken or stalled request, `onRefuse` of every connection over a limit.
    public init(
        path: String, limits: ConnectionLimits = .defaults,
        onReject: @escaping @Sendable (PeerCredentials, String) -> Void,
        onRefuse: @escaping @Sendable (PeerCredentials, String) -> Void = { _, _ in }
    ) throws(SocketError) {
        self.onReject = onReject
        self.onRefuse = onRefuse
        self.limits = limits
        if let fd = ListenSockets.activatedUnixStream() {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            listenFD = fd
            self.path = Self.boundPath(fd) ?? path
            isActivated = true
            return
        }
        listenFD = try Self.bind(path)
        self.path = path
        isActivated = false
    }

    /// Serves on `fd`, a listening socket an earlier image of taskd served before it re-executed
    /// itself (`taskctl upgrade`); the calls made meanwhile wait in its backlog.
    public init(
        inherited fd: Int32, path: String, activated: Bool, limits: ConnectionLimits = .defaults,
        onReject: @escaping @Sendable (PeerCredentials, String) -> Void,
        onRefuse: @escaping @Sendable (PeerCredentials, String) -> Void = { _, _ in }
    ) {
        self.onReject = onReject
        self.onRefuse = onRefuse
        self.limits = limits
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        listenFD = fd
        self.path = path
        isActivated = activated
    }

    /// The listening socket, for the next image of taskd (`taskctl upgrade`).
    public var listeningDescriptor: Int32 { listenFD }

    /// Stops accepting and leaves the socket open and bound: new calls wait in its backlog.
    public func pause() {
        if let t = token.withLock({ $0.take() }) { EventLoop.shared.deregister(fd: listenFD, token: t) }
    }

    /// Begins accepting connections. `serve` gets each call on the event loop's thread that read
    /// it, in order, and answers it through the `CallReply` it is given, at once or later.
    public func start(serve: @escaping @Sendable (VarlinkCall, CallReply) -> Void) {
        let timer = DeadlineTimer { [weak self] in self?.sweep() }
        sweeper.withLock { $0.timer = timer }
        let t = EventLoop.shared.register(fd: listenFD, events: EventLoop.readable) { [self] _ in
            // Captured, not kept in a `Mutex`: reading a closure out of a generic container through
            // `inout` wraps it in two more reabstraction thunks each time, a chain that grew per connection.
            self.acceptNext(serve)
        }
        token.withLock { $0 = t }
    }

    /// Stops accepting; with `removeSocket`, unlinks the socket file taskd created itself.
    public func stop() {
        if let t = token.withLock({ $0.take() }) { EventLoop.shared.deregister(fd: listenFD, token: t) }
        if !isActivated { unlink(path) }
    }

    /// How many client connections are open now.
    public var openConnectionCount: Int { open.withLock { $0.count } }

    /// Accepts one pending connection. The listening socket is level-triggered, so another pending
    /// one comes back at the loop's next turn, and the usual lone connection costs no `accept` that
    /// fails with EAGAIN (about 9 µs before the request is served, measured here).
    private func acceptNext(_ serve: @escaping @Sendable (VarlinkCall, CallReply) -> Void) {
        let fd = taskd_accept(listenFD)
        if fd < 0 {
            if errno == EMFILE || errno == ENFILE { pauseAccepting() }
            return
        }
        guard let peer = PeerCredentials(socket: fd) else {
            close(fd)
            return
        }
        if let refusal = admit(peer) { return refuse(fd, peer: peer, refusal) }
        let connection = ControlConnection(
            fd: fd, peer: peer, limits: limits, onReject: onReject,
            onDeadline: { [weak self] in self?.noteDeadline($0) },
            serve: serve
        ) { [self] c in
            _ = self.open.withLock { $0.removeValue(forKey: ObjectIdentifier(c)) }
        }
        open.withLock { $0[ObjectIdentifier(connection)] = connection }
        connection.start()
    }

    /// Why `peer` may not open one more connection, or nil if it may.
    private func admit(_ peer: PeerCredentials) -> String? {
        let (total, mine) = open.withLock { open in
            (open.count, peer.uid == 0 ? 0 : open.values.reduce(0) { $0 + ($1.peer.uid == peer.uid ? 1 : 0) })
        }
        if total >= limits.maxConnections { return "taskd has \(total) connections open (MaxConnections=)" }
        if peer.uid != 0, mine >= limits.maxConnectionsPerUser {
            return "uid \(peer.uid) has \(mine) connections open (MaxConnectionsPerUser=)"
        }
        return nil
    }

    /// Answers the connection's first call in advance with `TooManyConnections` and closes it;
    /// the socket is fresh, so the short reply fits its buffer and the send does not block.
    private func refuse(_ fd: Int32, peer: PeerCredentials, _ reason: String) {
        let reply = VarlinkReply.error(SchedulerInterface.tooManyConnections, ["reason": .string(reason)])
        let bytes = reply.encoded + [0]
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(fd)
        onRefuse(peer, reason)
    }

    /// Out of file descriptors: the pending connection would wake the level-triggered loop forever,
    /// so stop watching the socket for 100 ms (the sweep watches it again); clients wait in the backlog.
    private func pauseAccepting() {
        guard let t = token.withLock({ $0 }) else { return }
        EventLoop.shared.modify(fd: listenFD, token: t, events: 0)
        sweeper.withLock { $0.acceptPaused = true }
        noteDeadline(DeadlineTimer.now() + 100_000)
    }

    /// A connection may expire at `deadline`: arm the sweep for it unless it is armed earlier.
    private func noteDeadline(_ deadline: UInt64) {
        sweeper.withLock { s in
            guard s.armedAt.map({ deadline < $0 }) ?? true else { return }
            s.armedAt = deadline
            s.timer?.arm(at: deadline)
        }
    }

    /// Closes every connection past its deadline and arms for the earliest one left (not at all
    /// when none is open, so an idle taskd has no timer).
    private func sweep() {
        let resume = sweeper.withLock { s in
            s.armedAt = nil
            defer { s.acceptPaused = false }
            return s.acceptPaused
        }
        if resume, let t = token.withLock({ $0 }) {
            EventLoop.shared.modify(fd: listenFD, token: t, events: EventLoop.readable)
        }
        let now = DeadlineTimer.now()
        let connections = open.withLock { Array($0.values) }
        let next = connections.compactMap { $0.expire(now: now) }.min()
        if let next { noteDeadline(next) }
    }

    private static func bind(_ path: String) throws(SocketError) -> Int32 {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { makeDirectories(directory) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SocketError(message: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw SocketError(message: "socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { b in
            b.copyBytes(from: bytes)
            b[bytes.count] = 0
        }
        let size = socklen_t(MemoryLayout<sockaddr_un>.size)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Bool in
                let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
                defer { close(probe) }
                return connect(probe, p, size) == 0
            }
        }
        if connected {
            close(fd)
            throw SocketError(message: "another taskd is already listening on \(path)")
        }
        unlink(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, size) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SocketError(message: "cannot bind \(path): \(reason)")
        }
        chmod(path, 0o660)
        guard listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SocketError(message: "cannot listen on \(path): \(reason)")
        }
        return fd
    }

    /// The filesystem path a Unix socket is bound to, from getsockname; nil for abstract or unnamed ones.
    static func boundPath(_ fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.hasPrefix("/") ? path : nil
    }

    /// `mkdir -p`, mode 0755.
    public static func makeDirectories(_ path: String) {
        var current = ""
        for part in path.split(separator: "/") {
            current += "/" + part
            mkdir(current, 0o755)
        }
    }
}

/// The control socket could not be set up.
public struct SocketError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
