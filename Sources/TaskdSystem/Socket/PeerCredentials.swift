import CTaskdShim

#if canImport(Glibc)
    import Glibc
#endif

/// Who is on the other end of a Unix socket, from `SO_PEERCRED` (never from what the peer says).
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// The peer's supplementary groups (`SO_PEERGROUPS`), as its process had them at connect time;
    /// left empty for root and for taskd's own user, whom every access check allows anyway.
    public var groups: [UInt32]

    /// The user this process runs as.
    private static let ownUID = geteuid()

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    /// The credentials of the peer connected on `fd`, or nil.
    public init?(socket fd: Int32) {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard taskd_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        // One system call less per connection where the groups could change no answer.
        guard uid != 0 && uid != Self.ownUID else {
            self.init(pid: pid, uid: uid, gid: gid)
            return
        }
        var buffer = [gid_t](repeating: 0, count: 256)
        let count = taskd_peer_groups(fd, &buffer, Int32(buffer.count))
        self.init(pid: pid, uid: uid, gid: gid, groups: count > 0 ? Array(buffer[0..<Int(count)]) : [])
    }

    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}
