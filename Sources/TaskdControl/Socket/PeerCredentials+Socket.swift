import CTaskdShim
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The user this process runs as: a peer with its uid needs no group lookup.
private let ownUID = geteuid()

extension PeerCredentials {
    /// The credentials of the peer connected on `fd` (`SO_PEERCRED`, `SO_PEERGROUPS`), or nil.
    public init?(socket fd: Int32) {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard taskd_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        // One system call less per connection where the groups could change no answer.
        guard uid != 0 && uid != ownUID else {
            self.init(pid: pid, uid: uid, gid: gid)
            return
        }
        var buffer = [gid_t](repeating: 0, count: 256)
        let count = taskd_peer_groups(fd, &buffer, Int32(buffer.count))
        self.init(pid: pid, uid: uid, gid: gid, groups: count > 0 ? Array(buffer[0..<Int(count)]) : [])
    }
}
