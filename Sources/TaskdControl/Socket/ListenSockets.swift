import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// Sockets passed by the service manager (socket activation, `sd_listen_fds`).
public enum ListenSockets {
    /// The first passed fd that is a listening Unix stream socket, marked close-on-exec so that
    /// handlers do not inherit it; nil when taskd was not socket-activated.
    public static func activatedUnixStream() -> Int32? {
        let count = sd_listen_fds(1)
        guard count > 0 else { return nil }
        for fd in SD_LISTEN_FDS_START..<(SD_LISTEN_FDS_START + count) {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 { return fd }
        }
        return nil
    }
}
