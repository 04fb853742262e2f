#if canImport(Glibc)
    import Glibc
#endif

/// Where taskd and taskctl look for things when not told (docs/configuration.md): system paths as root,
/// XDG paths otherwise; systemd's `$STATE_DIRECTORY`/`$RUNTIME_DIRECTORY` win when set.
public enum DefaultPaths {
    static func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    static var isRoot: Bool { geteuid() == 0 }

    static var home: String { env("HOME") ?? "/" }

    /// `/etc/taskd` as root; `$XDG_CONFIG_HOME/taskd` (or `~/.config/taskd`) otherwise.
    public static var configDirectory: String {
        if let d = env("CONFIGURATION_DIRECTORY") { return d }
        if isRoot { return "/etc/taskd" }
        return (env("XDG_CONFIG_HOME") ?? home + "/.config") + "/taskd"
    }

    /// `/var/lib/taskd` as root; `$XDG_STATE_HOME/taskd` (or `~/.local/state/taskd`) otherwise.
    public static var stateDirectory: String {
        if let d = env("STATE_DIRECTORY") { return d }
        if isRoot { return "/var/lib/taskd" }
        return (env("XDG_STATE_HOME") ?? home + "/.local/state") + "/taskd"
    }

    /// `$TASKD_SOCKET`; else `/run/taskd/taskd.sock` as root; else `$XDG_RUNTIME_DIR/taskd/taskd.sock`;
    /// else `taskd.sock` in the state directory.
    public static var socketPath: String {
        if let s = env("TASKD_SOCKET") { return s }
        if let d = env("RUNTIME_DIRECTORY") { return d + "/taskd.sock" }
        if isRoot { return systemSocketPath }
        if let d = env("XDG_RUNTIME_DIR") { return d + "/taskd/taskd.sock" }
        return stateDirectory + "/taskd.sock"
    }

    /// The system daemon's socket (taskd.socket's `ListenStream=`).
    public static let systemSocketPath = "/run/taskd/taskd.sock"

    /// Where taskctl connects when not told: `socketPath` when something is there, else the system
    /// daemon's socket when it exists, so that a member of the `taskd` group reaches the system
    /// taskd without `--socket` while a user's own taskd still wins.
    public static var clientSocketPath: String {
        let own = socketPath
        if isRoot || env("TASKD_SOCKET") != nil || access(own, F_OK) == 0 { return own }
        return access(systemSocketPath, F_OK) == 0 ? systemSocketPath : own
    }
}
