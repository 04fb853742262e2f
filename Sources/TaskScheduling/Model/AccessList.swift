/// Who may do something: users and groups by number (names are resolved when the configuration
/// loads). Root and the daemon's own user are always allowed; the check never trusts a request,
/// only the peer's `SO_PEERCRED`/`SO_PEERGROUPS` identity.
public struct AccessList: Hashable, Sendable {
    public var users: [UInt32]
    public var groups: [UInt32]

    public init(users: [UInt32] = [], groups: [UInt32] = []) {
        self.users = users
        self.groups = groups
    }

    /// True when the peer is one of the users, or has one of the groups as its primary or a
    /// supplementary group.
    public func permits(uid: UInt32, gid: UInt32, groups peerGroups: [UInt32]) -> Bool {
        users.contains(uid) || groups.contains(gid) || peerGroups.contains { groups.contains($0) }
    }

    /// The rule taskd applies: no list allows everyone who can connect; root and `owner` (the
    /// daemon's own uid) are always allowed; otherwise the list decides.
    public static func allows(
        _ list: AccessList?, uid: UInt32, gid: UInt32, groups: [UInt32], owner: UInt32
    ) -> Bool {
        guard let list else { return true }
        return uid == 0 || uid == owner || list.permits(uid: uid, gid: gid, groups: groups)
    }
}
