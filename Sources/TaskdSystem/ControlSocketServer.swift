import CTaskdShim
import Synchronization
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket: a listening Unix stream socket (its own, or one passed by socket activation)
/// whose accepted connections come out of `connections`. Accepting runs on the event loop.
public final class ControlSocketServer: Sendable {
    /// Every accepted connection, as it arrives.
    public let connections: AsyncStream<ControlConnection>
    /// The path clients connect to (for an activated socket, the one it is bound to).
    public let path: String
    /// True when the socket came from the service manager.
    public let isActivated: Bool

    private let listenFD: Int32
    private let continuation: AsyncStream<ControlConnection>.Continuation
    private let token = Mutex<UInt64?>(nil)
    private let open = Mutex<[ObjectIdentifier: ControlConnection]>([:])
    private let onReject: @Sendable (PeerCredentials, String) -> Void

    /// Uses the socket-activated fd when there is one, else binds `path` (mode 0660, directory
    /// created 0755). A live socket at `path` is an error (another daemon serves it); a stale one is replaced.
    public init(path: String, onReject: @escaping @Sendable (PeerCredentials, String) -> Void) throws(SocketError) {
        self.onReject = onReject
        (connections, continuation) = AsyncStream.makeStream(of: ControlConnection.self)
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

    /// Begins accepting connections.
    public func start() {
        let t = EventLoop.shared.register(fd: listenFD, events: EventLoop.readable) { [self] _ in self.acceptAll() }
        token.withLock { $0 = t }
    }

    /// Stops accepting; with `removeSocket`, unlinks the socket file taskd created itself.
    public func stop() {
        if let t = token.withLock({ $0.take() }) { EventLoop.shared.deregister(fd: listenFD, token: t) }
        continuation.finish()
        if !isActivated { unlink(path) }
    }

    /// How many client connections are open now.
    public var openConnectionCount: Int { open.withLock { $0.count } }

    private func acceptAll() {
        while true {
            let fd = taskd_accept(listenFD)
            if fd < 0 { return }
            guard let peer = PeerCredentials(socket: fd) else {
                close(fd)
                continue
            }
            let connection = ControlConnection(fd: fd, peer: peer, onReject: onReject) { [self] c in
                _ = self.open.withLock { $0.removeValue(forKey: ObjectIdentifier(c)) }
            }
            open.withLock { $0[ObjectIdentifier(connection)] = connection }
            // Watch it first: yielding wakes a pool thread, which may preempt this one on a small machine.
            connection.start()
            continuation.yield(connection)
        }
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
