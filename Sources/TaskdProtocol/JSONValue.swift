/// A JSON value. Objects print with sorted keys, so output is deterministic.
public enum JSONValue: Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d == d.rounded() && abs(d) < 9e15: return Int64(d)
        default: return nil
        }
    }
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }
    public var isNull: Bool { self == .null }

    /// Compact JSON text.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// Compact JSON text as UTF-8.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(to: &out)
        return out
    }

    /// Appends the compact JSON text of this value to `out` as UTF-8.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): Self.writeInteger(i, to: &out)
        case .double(let d):
            if d.isFinite && d == d.rounded() && abs(d) < 1e15 {
                Self.writeInteger(Int64(d), to: &out)
            } else {
                out.append(contentsOf: (d.isFinite ? String(d) : "null").utf8)
            }
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                v.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            // Sorted as pairs: no second look-up (and hash) of each key.
            for (i, member) in o.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `i` in decimal, without an intermediate String.
    public static func writeInteger(_ i: Int64, to out: inout [UInt8]) {
        if i < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = i.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        let count = withUnsafeMutableBytes(of: &digits) { buffer -> Int in
            var n = 0
            repeat {
                buffer[23 - n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            return n
        }
        withUnsafeBytes(of: &digits) { out.append(contentsOf: $0[(24 - count)...]) }
    }

    /// Appends `s` as a JSON string: quoted, with `"`, `\\` and control characters escaped.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            // Two passes, no append per escape: how many bytes the escapes add, then the string
            // written in place (a metrics reply, 1.7 MB of text, has an escape every 8 bytes).
            var added = 0
            for byte in utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                added += byte == 0x22 || byte == 0x5C || byte == 0x0A || byte == 0x0D || byte == 0x09 ? 1 : 5
            }
            guard added > 0 else { return out.append(contentsOf: utf8) }
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: utf8.count + added))
            out.withUnsafeMutableBufferPointer { buffer in
                var at = buffer.baseAddress! + start
                for byte in utf8 {
                    guard byte < 0x20 || byte == 0x22 || byte == 0x5C else {
                        at.pointee = byte
                        at += 1
                        continue
                    }
                    at[0] = 0x5C
                    switch byte {
                    case 0x22, 0x5C: at[1] = byte
                    case 0x0A: at[1] = UInt8(ascii: "n")
                    case 0x0D: at[1] = UInt8(ascii: "r")
                    case 0x09: at[1] = UInt8(ascii: "t")
                    default:
                        let hex: StaticString = "0123456789abcdef"
                        (at[1], at[2], at[3]) = (UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"))
                        (at[4], at[5]) = (hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)])
                        at += 4
                    }
                    at += 2
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
}
