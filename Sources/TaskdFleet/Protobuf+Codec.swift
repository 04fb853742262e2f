import TaskdProtocol

/// The protobuf wire format (varints, length-delimited fields) for `Protobuf.schema`'s messages,
/// to and from JSON values, and gRPC's framing of messages on an HTTP/2 stream.
extension Protobuf {
    /// `value` (an object named as the schema names the fields) as message `name`; nil if a
    /// field is not in the schema or its value does not fit its type.
    static func encode(_ value: JSONValue, as name: String) -> [UInt8]? {
        guard let message = schema[name], let fields = value.objectValue else { return nil }
        var out: [UInt8] = []
        // In field order, as protoc writes them (any order reads the same).
        for (field, item) in fields.sorted(by: { (message[$0.key]?.number ?? 0) < (message[$1.key]?.number ?? 0) }) {
            guard let spec = message[field] else { return nil }
            for element in spec.repeated ? (item.arrayValue ?? []) : [item] {
                guard append(element, spec, to: &out) else { return nil }
            }
        }
        return out
    }

    private static func append(_ value: JSONValue, _ field: Field, to out: inout [UInt8]) -> Bool {
        switch field.kind {
        case .int64:
            guard let n = EtcdRequest.int(value) else { return false }
            varint(UInt64(field.number << 3), to: &out)
            varint(UInt64(bitPattern: n), to: &out)
        case .bool:
            guard let b = value.boolValue else { return false }
            varint(UInt64(field.number << 3), to: &out)
            out.append(b ? 1 : 0)
        case .enumeration(let names):
            guard let n = value.stringValue.flatMap(names.firstIndex(of:)) ?? value.intValue.map(Int.init) else {
                return false
            }
            varint(UInt64(field.number << 3), to: &out)
            varint(UInt64(n), to: &out)
        case .bytes:
            guard let bytes = value.stringValue.flatMap(Base64.decode) else { return false }
            delimited(bytes, field.number, to: &out)
        case .string:
            guard let text = value.stringValue else { return false }
            delimited(Array(text.utf8), field.number, to: &out)
        case .message(let name):
            guard let bytes = encode(value, as: name) else { return false }
            delimited(bytes, field.number, to: &out)
        }
        return true
    }

    private static func delimited(_ bytes: [UInt8], _ number: Int, to out: inout [UInt8]) {
        varint(UInt64(number << 3 | 2), to: &out)
        varint(UInt64(bytes.count), to: &out)
        out.append(contentsOf: bytes)
    }

    static func varint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Message `name` read from `bytes` as a JSON object (unknown fields skipped); nil if the
    /// bytes are not a well-formed message.
    static func decode(_ bytes: ArraySlice<UInt8>, as name: String) -> JSONValue? {
        guard let message = schema[name] else { return nil }
        var fields: [String: JSONValue] = [:]
        var at = bytes.startIndex
        while at < bytes.endIndex {
            guard let tag = readVarint(bytes, &at) else { return nil }
            let number = Int(tag >> 3)
            let field = message.first { $0.value.number == number }
            var raw: ArraySlice<UInt8>?
            var scalar: UInt64 = 0
            switch tag & 7 {
            case 0: guard let v = readVarint(bytes, &at) else { return nil }; scalar = v
            case 1, 5:
                let size = tag & 7 == 1 ? 8 : 4
                guard bytes.endIndex - at >= size else { return nil }
                at += size
                continue  // no fixed-width field in the schema
            case 2:
                guard let length = readVarint(bytes, &at), UInt64(bytes.endIndex - at) >= length else { return nil }
                raw = bytes[at..<(at + Int(length))]
                at += Int(length)
            default: return nil
            }
            guard let (key, spec) = field.map({ ($0.key, $0.value) }) else { continue }
            guard let value = read(spec.kind, scalar: scalar, raw: raw) else { return nil }
            if spec.repeated {
                fields[key] = .array((fields[key]?.arrayValue ?? []) + [value])
            } else {
                fields[key] = value
            }
        }
        return .object(fields)
    }

    private static func read(_ kind: Kind, scalar: UInt64, raw: ArraySlice<UInt8>?) -> JSONValue? {
        switch (kind, raw) {
        case (.int64, nil): .string(String(Int64(bitPattern: scalar)))
        case (.bool, nil): .bool(scalar != 0)
        case (.enumeration(let names), nil): scalar < names.count ? .string(names[Int(scalar)]) : .int(Int64(scalar))
        case (.bytes, let raw?): .string(Base64.encode(raw))
        case (.string, let raw?): .string(String(decoding: raw, as: UTF8.self))
        case (.message(let name), let raw?): decode(raw, as: name)
        default: nil
        }
    }

    private static func readVarint(_ bytes: ArraySlice<UInt8>, _ at: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < bytes.endIndex, shift < 64 {
            let byte = bytes[at]
            at += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// A message framed as gRPC sends it: not compressed, its length (4 bytes, big-endian), itself.
    static func frame(_ message: [UInt8]) -> [UInt8] {
        let n = UInt32(message.count)
        return [0, UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + message
    }

    /// Takes the whole frames off the front of `buffer`: their messages (nil for a compressed
    /// one, which taskd never asks for).
    static func frames(_ buffer: inout [UInt8]) -> [ArraySlice<UInt8>?] {
        var out: [ArraySlice<UInt8>?] = []
        var at = 0
        while buffer.count - at >= 5 {
            let length = buffer[(at + 1)..<(at + 5)].reduce(0) { $0 << 8 | Int($1) }
            guard buffer.count - at - 5 >= length else { break }
            out.append(buffer[at] == 0 ? buffer[(at + 5)..<(at + 5 + length)] : nil)
            at += 5 + length
        }
        if at > 0 {
            out = out.map { $0.map { ArraySlice(Array($0)) } }
            buffer.removeFirst(at)
        }
        return out
    }
}
