import CTaskdShim

/// The version taskd reports (`--version`, Varlink `GetInfo`): `TASKD_VERSION` of the C shim.
public enum TaskdVersion {
    public static let current = String(cString: taskd_version())
}
