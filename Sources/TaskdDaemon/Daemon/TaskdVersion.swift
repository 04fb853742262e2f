/// The version taskd reports (`--version`, Varlink `GetInfo`).
public enum TaskdVersion {
    public static let current = "0.1.0"
}
