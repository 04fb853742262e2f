#if canImport(Glibc)
    import Glibc
#endif

/// Resolves user and group names (or numbers) from the system's databases, when the
/// configuration loads: `AllowUsers=`, `AllowGroups=`, `WakeUsers=`, `WakeGroups=`, `User=`,
/// `Group=`, `SupplementaryGroups=`.
enum Identities {
    /// A user's passwd entry; only `uid` is known for a number with no entry.
    struct User: Hashable, Sendable {
        var name: String
        var uid: UInt32
        var gid: UInt32?
        var home: String?
        var shell: String?
    }

    /// The passwd entry of a user name or number; a number with no entry has only its uid.
    static func user(_ word: Substring) -> User? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        let found: Int32
        if let n = UInt32(word) {
            found = getpwuid_r(n, &entry, &buffer, buffer.count, &result)
            guard found == 0, result != nil else { return User(name: String(word), uid: n) }
        } else {
            found = getpwnam_r(String(word), &entry, &buffer, buffer.count, &result)
            guard found == 0, result != nil else { return nil }
        }
        return User(
            name: String(cString: entry.pw_name), uid: entry.pw_uid, gid: entry.pw_gid,
            home: String(cString: entry.pw_dir), shell: String(cString: entry.pw_shell))
    }

    /// The groups `name` belongs to with `gid`, as initgroups(3) would set them.
    static func groupList(of name: String, gid: UInt32) -> [UInt32] {
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let previous = count
            if getgrouplist(name, gid, &groups, &count) >= 0 { return Array(groups.prefix(Int(count))) }
            if count <= previous { count = previous * 2 }
        }
    }

    /// The uid of a user name or number, or nil if there is no such user.
    static func userID(_ word: Substring) -> UInt32? {
        if let n = UInt32(word) { return n }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwnam_r(String(word), &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.pw_uid
    }

    /// The gid of a group name or number, or nil if there is no such group.
    static func groupID(_ word: Substring) -> UInt32? {
        if let n = UInt32(word) { return n }
        var entry = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 65536)
        guard getgrnam_r(String(word), &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }

    /// A one-name key: nil for an empty value (a reset), else what `lookup` finds; an unknown name is an error.
    static func one<T>(
        _ e: UnitFileEntry, _ noun: String, _ lookup: (Substring) -> T?
    ) throws(ConfigDiagnostic) -> T? {
        if e.value.isEmpty { return nil }
        guard let found = lookup(e.value[...]) else {
            throw ConfigDiagnostic(e.location, key: e.key, "no such \(noun) '\(e.value)'")
        }
        return found
    }

    /// A list key of names: an empty value resets it, anything else appends; an unknown name is an error.
    static func append(
        _ list: [UInt32]?, _ e: UnitFileEntry, groups: Bool
    ) throws(ConfigDiagnostic) -> [UInt32] {
        if e.value.isEmpty { return [] }
        var ids = list ?? []
        for word in e.value.split(separator: " ") {
            guard let id = groups ? groupID(word) : userID(word) else {
                throw ConfigDiagnostic(e.location, key: e.key, "no such \(groups ? "group" : "user") '\(word)'")
            }
            ids.append(id)
        }
        return ids
    }
}
