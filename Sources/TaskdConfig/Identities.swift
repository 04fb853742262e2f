#if canImport(Glibc)
    import Glibc
#endif

/// Resolves user and group names (or numbers) from the system's databases, when the
/// configuration loads: `AllowUsers=`, `AllowGroups=`, `WakeUsers=`, `WakeGroups=`.
enum Identities {
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
