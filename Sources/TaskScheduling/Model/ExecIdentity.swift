/// Who a command runs as and how ([Exec] User=, Group=, SupplementaryGroups=, UMask=, Nice=),
/// names already resolved to numbers when the configuration loaded; nil keeps taskd's own.
public struct ExecIdentity: Hashable, Sendable {
    public var uid: UInt32?
    public var gid: UInt32?
    /// The whole supplementary group list (the user's groups, as initgroups(3) finds them, plus
    /// SupplementaryGroups=); nil keeps taskd's.
    public var groups: [UInt32]?
    /// User=, with its passwd entry's home and shell, for the command's USER, LOGNAME, HOME, SHELL.
    public var userName: String?
    public var home: String?
    public var shell: String?
    public var umask: UInt32?
    public var nice: Int32?

    public init() {}

    /// True when nothing changes, so the command can start with plain `posix_spawn`.
    public var isInherited: Bool { uid == nil && gid == nil && groups == nil && umask == nil && nice == nil }
}
