import TaskScheduling
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Output helpers: stdout/stderr lines, local times, relative spans and aligned tables.
enum Terminal {
    static func out(_ s: String) { write(1, s + "\n") }
    static func err(_ s: String) { write(2, s + "\n") }
    /// `s` as it is, no newline (a live line).
    static func raw(_ s: String) { write(1, s) }
    /// A reply as JSON text, for `--json`.
    static func json(_ value: some Encodable) -> String {
        ((try? JSONValueEncoder().encode(value)) ?? .null).description
    }

    private static func write(_ fd: Int32, _ s: String) { FileIO.writeAll(fd, Array(s.utf8)) }

    /// `Sat 2026-11-21 18:30:00 UTC` in the local zone.
    static func time(_ usec: UInt64) -> String { Timestamp.format(usec) }

    static func nowUSec() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    /// A span rounded to what people read: `1.204s`, `14min 59s`; `coarse` rounds to seconds past 1 s.
    static func span(_ usec: UInt64, coarse: Bool = false) -> String {
        let accuracy: UInt64 = usec < (coarse ? 1_000_000 : 60_000_000) ? 1_000 : 1_000_000
        return TimeSpan(microseconds: usec).format(accuracy: accuracy)
    }

    /// Bytes as `512B`, `4.0K`, `12.5M`, `1.2G` (powers of 1024, as systemctl status prints memory).
    static func bytes(_ count: UInt64) -> String {
        var value = Double(count)
        for unit in ["B", "K", "M", "G", "T"] {
            if value < 1024 || unit == "T" {
                if unit == "B" { return "\(count)B" }
                let tenths = (value * 10).rounded() / 10
                return "\(tenths)\(unit)"
            }
            value /= 1024
        }
        return "\(count)B"
    }

    /// Columns padded to their widest cell, two spaces apart.
    static func table(_ rows: [[String]]) -> String {
        guard let width = rows.map(\.count).max() else { return "" }
        var widths = [Int](repeating: 0, count: width)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
