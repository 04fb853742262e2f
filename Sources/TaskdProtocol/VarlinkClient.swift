#if canImport(Glibc)
    import Glibc
#endif

/// A blocking Varlink client over a Unix stream socket, for command-line tools (not for the
/// cooperative pool: every call blocks its thread).
public final class VarlinkClient {
    private let fd: Int32
    private var framer = VarlinkFramer(maxMessageSize: 16 * 1024 * 1024)

    /// Connects to `path`; throws `.unreachable` with the errno text when nothing listens there.
    public init(path: String) throws(VarlinkClientError) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .unreachable(path: path, reason: String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw .unreachable(path: path, reason: "socket path too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { b in
            b.copyBytes(from: bytes)
            b[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            if code == EACCES || code == EPERM { throw .notPermitted(path: path) }
            throw .unreachable(path: path, reason: String(cString: strerror(code)))
        }
    }

    deinit { close(fd) }

    /// Sends `call` and hands each reply to `onReply` until one does not continue; returns the last.
    @discardableResult
    public func call(_ call: VarlinkCall, onReply: (VarlinkReply) -> Void = { _ in }) throws(VarlinkClientError)
        -> VarlinkReply
    {
        do {
            try send(call.encoded + [0])
        } catch {
            // taskd may have answered and closed before reading (TooManyConnections): read that answer.
            guard let early = try? receive() else { throw error }
            onReply(early)
            return early
        }
        while true {
            let reply = try receive()
            onReply(reply)
            if !reply.continues || reply.error != nil { return reply }
        }
    }

    private func send(_ bytes: [UInt8]) throws(VarlinkClientError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(String(cString: strerror(errno)))
            }
            offset += n
        }
    }

    private func receive() throws(VarlinkClientError) -> VarlinkReply {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            do {
                if let message = try framer.next() {
                    do { return try VarlinkReply(message: message) } catch { throw VarlinkClientError.io(error.reason) }
                }
            } catch let e as VarlinkClientError {
                throw e
            } catch {
                throw .io("\(error)")
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(String(cString: strerror(errno)))
            }
            if n == 0 { throw .io("the daemon closed the connection") }
            framer.append(buffer[0..<n])
        }
    }
}

/// Why a call did not get a reply.
public enum VarlinkClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing listens at the path (or it cannot be connected to).
    case unreachable(path: String, reason: String)
    /// The socket's file mode refuses this user (not root and not in its group).
    case notPermitted(path: String)
    /// The connection broke or the daemon sent something that is not Varlink.
    case io(String)

    public var description: String {
        switch self {
        case .unreachable(let path, let reason): return "cannot connect to taskd at \(path): \(reason)"
        case .notPermitted(let path):
            return "cannot connect to taskd at \(path): permission denied (only root and members of the socket's "
                + "group, taskd under systemd, may use it)"
        case .io(let reason): return "connection to taskd failed: \(reason)"
        }
    }
}
