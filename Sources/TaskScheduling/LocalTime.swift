#if canImport(Glibc)
    import Glibc
#endif

/// Formats CLOCK_REALTIME microseconds as local time (`TZ`, `/etc/localtime`): `Sat 2026-11-21 18:30:00 UTC`.
public enum LocalTime {
    public static func format(realtime usec: UInt64) -> String {
        var seconds = time_t(usec / 1_000_000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, "%a %Y-%m-%d %H:%M:%S %Z", &parts)
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
