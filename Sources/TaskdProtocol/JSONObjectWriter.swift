/// Writes one JSON object straight to bytes, members in the order given, which must be the sorted
/// order `JSONValue` prints (the caller's duty; checked in debug builds): the text equals that of
/// the same `JSONValue.object`, without building a dictionary or hashing and sorting its keys.
/// Member names are literals that need no escape, copied as they are.
public struct JSONObjectWriter {
    private var out: [UInt8]
    private var first = true
    #if DEBUG
        private var lastKey: String?
    #endif

    /// An object to be written after the bytes already in `out`.
    public init(appendingTo out: [UInt8] = []) {
        self.out = out
        self.out.reserveCapacity(out.count + 512)  // a run's object in one allocation
        self.out.append(UInt8(ascii: "{"))
    }

    /// A member's name, copied as the code spells it: it must need no escape (checked in debug
    /// builds). A `StaticString`, so that no name is scanned or bridged at run time.
    private mutating func key(_ name: StaticString) {
        #if DEBUG
            let text = name.description
            assert(lastKey.map { $0 < text } ?? true, "JSONObjectWriter: \(text) written out of order")
            assert(
                text.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C },
                "JSONObjectWriter: \(text) needs an escape")
            lastKey = text
        #endif
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    public mutating func string(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        JSONValue.writeString(value, to: &out)
    }

    public mutating func int(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        JSONValue.writeInteger(value, to: &out)
    }

    /// A count of microseconds or the like, clamped as `JSONValue.int(Int64(...))` would not trap on.
    public mutating func int(_ name: StaticString, _ value: UInt64?) {
        int(name, value.map { Int64(clamping: $0) })
    }

    public mutating func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func value(_ name: StaticString, _ value: JSONValue?) {
        guard let value else { return }
        key(name)
        value.write(to: &out)
    }

    /// A member whose value is JSON text already (`JSONObjectWriter.array` of encoded values, say).
    public mutating func json(_ name: StaticString, _ text: [UInt8]) {
        key(name)
        out.append(contentsOf: text)
    }

    /// A JSON array of values already encoded.
    public static func array(_ items: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(items.reduce(2) { $0 + $1.count + 1 })
        for (i, item) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: item)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// The bytes with the object closed.
    public consuming func finish() -> [UInt8] {
        out.append(UInt8(ascii: "}"))
        return out
    }
}
