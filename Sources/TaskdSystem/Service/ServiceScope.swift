import CTaskdBus

/// A transient scope unit of systemd's (`StartTransientUnit`, `Delegate=yes`), so that a process
/// and what it spawns live outside the unit of the process that made it.
public enum ServiceScope {
    /// Starts the scope `name` holding `pid`; nil, or why it could not. Blocking (D-Bus): call it
    /// off the event loop.
    public static func start(_ name: String, pid: Int32, description: String) -> String? {
        var why = [CChar](repeating: 0, count: 512)
        let r = taskd_start_scope(name, pid, description, &why, why.count)
        guard r < 0 else { return nil }
        return String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
