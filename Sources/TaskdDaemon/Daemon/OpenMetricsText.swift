import TaskScheduling

/// taskd's metrics as text, written into one byte buffer, no dependency: the OpenMetrics format
/// (what `taskctl metrics` gives and Prometheus scrapes), or the older Prometheus text format
/// (what node_exporter's textfile collector parses: a counter's TYPE names its `_total` samples,
/// and there is no `# EOF`).
struct OpenMetricsText {
    private(set) var bytes: [UInt8] = []
    let prometheus: Bool

    init(capacity: Int = 4096, prometheus: Bool = false) {
        bytes.reserveCapacity(capacity)
        self.prometheus = prometheus
    }

    /// `# TYPE name type` and `# HELP name help`.
    mutating func family(_ name: String, _ type: String, _ help: String) {
        let name = prometheus && type == "counter" ? name + "_total" : name
        append("# TYPE \(name) \(type)\n# HELP \(name) \(help)\n")
    }

    /// One sample: `name{task="…",kind="…",extra} value`.
    mutating func sample(_ name: String, key: TaskKey? = nil, labels extra: [(String, String)] = [], _ value: String) {
        append(name)
        if key != nil || !extra.isEmpty {
            bytes.append(UInt8(ascii: "{"))
            var first = true
            func label(_ label: String, _ value: String) {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                append(label)
                append("=\"")
                // Most values need no escape: appended whole, not byte by byte.
                var value = value
                value.withUTF8 { utf8 in
                    let escapes = utf8.contains {
                        $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n")
                    }
                    guard escapes else { return bytes.append(contentsOf: utf8) }
                    for byte in utf8 {
                        switch byte {
                        case UInt8(ascii: "\\"): append("\\\\")
                        case UInt8(ascii: "\""): append("\\\"")
                        case UInt8(ascii: "\n"): append("\\n")
                        default: bytes.append(byte)
                        }
                    }
                }
                bytes.append(UInt8(ascii: "\""))
            }
            if let key {
                label("task", key.identifier)
                label("kind", key.kind)
            }
            for (name, value) in extra { label(name, value) }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: " "))
        append(value)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// The closing `# EOF`.
    mutating func finish() -> [UInt8] {
        if !prometheus { append("# EOF\n") }
        return bytes
    }

    /// Seconds since the epoch, as OpenMetrics timestamps are: `1764117600.123456`.
    static func seconds(_ usec: UInt64) -> String {
        // Digits written right to left at the end of the buffer, then moved to its start: one
        // allocation where interpolating and padding took five (10,000 tasks have 30,000 of these).
        String(unsafeUninitializedCapacity: 24) { buffer in
            var at = 24
            var rest = usec
            func digit() {
                at -= 1
                buffer[at] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            for _ in 0..<6 { digit() }
            at -= 1
            buffer[at] = UInt8(ascii: ".")
            repeat { digit() } while rest > 0
            for i in 0..<(24 - at) { buffer[i] = buffer[at + i] }
            return 24 - at
        }
    }

    /// A double as OpenMetrics writes it (`+Inf` for infinity).
    static func number(_ value: Double) -> String { value.isInfinite ? "+Inf" : "\(value)" }

    /// The text's bytes, copied whole (appending `text.utf8` went byte by byte).
    private mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }
}
