import CTaskdShim

/// Who is on the other end of a Unix socket, from `SO_PEERCRED` (never from what the peer says).
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of the peer connected on `fd`, or nil.
    public init?(socket fd: Int32) {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard taskd_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        self.init(pid: pid, uid: uid, gid: gid)
    }

    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}
