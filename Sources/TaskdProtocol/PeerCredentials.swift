/// Who is on the other end of a Unix socket, as the kernel tells it (`SO_PEERCRED`, never what the
/// peer says): the control plane reads it, the daemon's access checks decide on it.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// The peer's supplementary groups (`SO_PEERGROUPS`), as its process had them at connect time;
    /// left empty for root and for taskd's own user, whom every access check allows anyway.
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}
