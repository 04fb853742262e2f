#if canImport(Glibc)
    import Glibc
#endif

/// Where a daemon named NAME (`taskd`, or an app's such as `weatherd`) and taskctl look for things
/// when not told (docs/configuration.md): system paths as root, XDG paths otherwise; systemd's
/// `$CONFIGURATION_DIRECTORY`/`$STATE_DIRECTORY`/`$RUNTIME_DIRECTORY` win when set.
public enum DefaultPaths {
    static func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    static var isRoot: Bool { geteuid() == 0 }

    static var home: String { env("HOME") ?? "/" }

    /// `/etc/NAME` as root; `$XDG_CONFIG_HOME/NAME` (or `~/.config/NAME`) otherwise.
    public static func configDirectory(of name: String = "taskd") -> String {
        if let d = env("CONFIGURATION_DIRECTORY") { return d }
        if isRoot { return "/etc/\(name)" }
        return (env("XDG_CONFIG_HOME") ?? home + "/.config") + "/\(name)"
    }

    /// `/var/lib/NAME` as root; `$XDG_STATE_HOME/NAME` (or `~/.local/state/NAME`) otherwise.
    public static func stateDirectory(of name: String = "taskd") -> String {
        if let d = env("STATE_DIRECTORY") { return d }
        if isRoot { return "/var/lib/\(name)" }
        return (env("XDG_STATE_HOME") ?? home + "/.local/state") + "/\(name)"
    }

    /// `$TASKD_SOCKET`; else `NAME.sock` in `$RUNTIME_DIRECTORY`; else `/run/NAME/NAME.sock` as root;
    /// else `$XDG_RUNTIME_DIR/NAME/NAME.sock`; else `NAME.sock` in the state directory.
    public static func socketPath(of name: String = "taskd") -> String {
        if let s = env("TASKD_SOCKET") { return s }
        if let d = env("RUNTIME_DIRECTORY") { return d + "/\(name).sock" }
        if isRoot { return "/run/\(name)/\(name).sock" }
        if let d = env("XDG_RUNTIME_DIR") { return d + "/\(name)/\(name).sock" }
        return stateDirectory(of: name) + "/\(name).sock"
    }

    /// The system daemon's socket (taskd.socket's `ListenStream=`).
    public static let systemSocketPath = "/run/taskd/taskd.sock"

    /// Where taskctl connects when not told: `socketPath()` when something is there, else the system
    /// daemon's socket when it exists, so that a member of the `taskd` group reaches the system
    /// taskd without `--socket` while a user's own taskd still wins.
    public static var clientSocketPath: String {
        let own = socketPath()
        if isRoot || env("TASKD_SOCKET") != nil || access(own, F_OK) == 0 { return own }
        return access(systemSocketPath, F_OK) == 0 ? systemSocketPath : own
    }
}
