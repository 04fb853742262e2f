/// Signal names as `KillSignal=` accepts them (`SIGTERM`, `TERM`, `15`) and as the journal prints them.
public enum SignalNames {
    public static let table: [(String, Int32)] = [
        ("HUP", 1), ("INT", 2), ("QUIT", 3), ("ILL", 4), ("TRAP", 5), ("ABRT", 6), ("BUS", 7), ("FPE", 8),
        ("KILL", 9), ("USR1", 10), ("SEGV", 11), ("USR2", 12), ("PIPE", 13), ("ALRM", 14), ("TERM", 15),
        ("STKFLT", 16), ("CHLD", 17), ("CONT", 18), ("STOP", 19), ("TSTP", 20), ("TTIN", 21), ("TTOU", 22),
        ("URG", 23), ("XCPU", 24), ("XFSZ", 25), ("VTALRM", 26), ("PROF", 27), ("WINCH", 28), ("IO", 29),
        ("PWR", 30), ("SYS", 31),
    ]

    /// The signal number for a name or number, or nil.
    public static func number(_ text: String) -> Int32? {
        if let n = Int32(text), n > 0, n < 65 { return n }
        let name = text.hasPrefix("SIG") ? String(text.dropFirst(3)) : text
        return table.first { $0.0 == name }?.1
    }

    /// `SIGTERM` for 15; `SIG42` for a number without a name.
    public static func name(_ number: Int32) -> String {
        "SIG" + (table.first { $0.1 == number }?.0 ?? String(number))
    }
}
