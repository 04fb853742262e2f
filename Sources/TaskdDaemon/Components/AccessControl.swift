import TaskScheduling
import TaskdConfig
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Who may use taskd: the socket at all (`AllowUsers=`, `AllowGroups=` of the configuration in
/// effect), a task's wakes and cancels (its `WakeUsers=`, `WakeGroups=`), and what only root and
/// taskd's own user may do (reload, drain, upgrade). Peers are known by `SO_PEERCRED`.
package final class AccessControl: DaemonComponent {
    private var access: AccessList?

    package init(config: LoadedConfig, ports: DaemonPorts) { access = config.daemon.access }

    package func reconfigure(_ config: LoadedConfig) { access = config.daemon.access }

    /// taskd's own user, who may always use it.
    static let owner = geteuid()

    /// Throws `permissionDenied` unless the peer may use the socket (`AllowUsers=`, `AllowGroups=`).
    func checkAccess(_ peer: PeerCredentials) throws {
        guard AccessList.allows(access, uid: peer.uid, gid: peer.gid, groups: peer.groups, owner: Self.owner) else {
            throw DaemonError.permissionDenied("uid \(peer.uid) may not use taskd (AllowUsers=, AllowGroups=)")
        }
    }

    /// Throws `permissionDenied` unless the peer may wake or cancel every task of `keys`
    /// (`WakeUsers=`, `WakeGroups=`).
    static func checkWake(_ peer: PeerCredentials, _ keys: [TaskKey], _ tasks: TaskTable) throws {
        for key in keys {
            let rule = tasks[key]?.definition.wakeAccess
            guard AccessList.allows(rule, uid: peer.uid, gid: peer.gid, groups: peer.groups, owner: owner) else {
                throw DaemonError.permissionDenied(
                    "uid \(peer.uid) may not wake or cancel \(key) (WakeUsers=, WakeGroups=)")
            }
        }
    }

    /// Throws `permissionDenied` unless the peer is root or taskd's own user (reload, drain).
    static func checkAdmin(_ peer: PeerCredentials) throws {
        guard peer.uid == 0 || peer.uid == owner else {
            throw DaemonError.permissionDenied(
                "uid \(peer.uid) may not reload or drain taskd: only root and taskd's own user may")
        }
    }
}
