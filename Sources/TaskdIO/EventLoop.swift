import CTaskdShim
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One dedicated thread waiting in `epoll_wait` for every fd taskd watches (handler pipes, pidfds,
/// client sockets). Handlers run on that thread, so they must not block. It replaces Dispatch read
/// sources, whose epoll bookkeeping on Linux can crash under fast setup and teardown
/// (swift-corelibs-libdispatch#949). Tokens are never reused, so an event for an fd that was just
/// deregistered is dropped, not delivered to whatever reuses the fd number.
public final class EventLoop: Sendable {
    public static let shared = EventLoop()

    /// epoll event bits.
    public static let readable = UInt32(EPOLLIN.rawValue)
    public static let writable = UInt32(EPOLLOUT.rawValue)
    public static let hangup = UInt32(EPOLLHUP.rawValue) | UInt32(EPOLLERR.rawValue)

    private let epfd: Int32
    private let handlers = Mutex<[UInt64: @Sendable (UInt32) -> Void]>([:])
    private let nextToken = Atomic<UInt64>(1)

    private init() {
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epfd >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
        let epfd = self.epfd
        Thread.detach { [self] in
            var tokens = [UInt64](repeating: 0, count: 64)
            var events = [UInt32](repeating: 0, count: 64)
            while true {
                let n = taskd_epoll_wait(epfd, &tokens, &events, 64, -1)
                if n < 0 { continue }  // EINTR
                for i in 0..<Int(n) {
                    let handler = handlers.withLock { $0[tokens[i]] }
                    handler?(events[i])
                }
            }
        }
    }

    /// Watches `fd` for `events` (level-triggered); returns the token that names the registration.
    public func register(fd: Int32, events: UInt32, handler: @escaping @Sendable (UInt32) -> Void) -> UInt64? {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).oldValue
        handlers.withLock { $0[token] = handler }
        guard taskd_epoll_ctl(epfd, EPOLL_CTL_ADD, fd, events, token) == 0 else {
            _ = handlers.withLock { $0.removeValue(forKey: token) }
            return nil
        }
        return token
    }

    /// Changes the events a registration waits for.
    public func modify(fd: Int32, token: UInt64, events: UInt32) {
        _ = taskd_epoll_ctl(epfd, EPOLL_CTL_MOD, fd, events, token)
    }

    /// Stops watching `fd`; no handler call for `token` starts after this returns. Close the fd after.
    public func deregister(fd: Int32, token: UInt64) {
        _ = handlers.withLock { $0.removeValue(forKey: token) }
        _ = taskd_epoll_ctl(epfd, EPOLL_CTL_DEL, fd, 0, 0)
    }
}
