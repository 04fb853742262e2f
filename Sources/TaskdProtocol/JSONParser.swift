/// A strict RFC 8259 parser with a nesting limit: rejects invalid UTF-8, control characters in
/// strings, lone surrogates, trailing garbage and anything nested deeper than `maxDepth`.
public struct JSONParser {
    public static let defaultMaxDepth = 64

    private let bytes: [UInt8]
    private var i = 0
    private let maxDepth: Int

    /// Parses one JSON document from `bytes`.
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONError)
        -> JSONValue
    {
        var p = JSONParser(bytes: Array(bytes), maxDepth: maxDepth)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == p.bytes.count else { throw p.error("unexpected characters after the JSON value") }
        return v
    }

    public static func parse(_ text: String) throws(JSONError) -> JSONValue { try parse(Array(text.utf8)) }

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func error(_ message: String) -> JSONError { JSONError(offset: i, message: message) }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard depth < maxDepth else { throw error("nested deeper than \(maxDepth) levels") }
        guard i < bytes.count else { throw error("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character")
        }
    }

    private mutating func literal(_ word: String, _ v: JSONValue) throws(JSONError) -> JSONValue {
        let w = Array(word.utf8)
        guard bytes.count - i >= w.count, Array(bytes[i..<i + w.count]) == w else { throw error("invalid literal") }
        i += w.count
        return v
    }

    private mutating func object(depth: Int) throws(JSONError) -> JSONValue {
        i += 1
        // Room for a Varlink call's members, so that the usual object is allocated once.
        var members = [String: JSONValue](minimumCapacity: 4)
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error("expected ':'") }
            i += 1
            skipSpace()
            members[key] = try value(depth: depth + 1)
            skipSpace()
            guard i < bytes.count else { throw error("unexpected end of input in an object") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard bytes[i] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
            i += 1
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(JSONError) -> JSONValue {
        i += 1
        var items: [JSONValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard i < bytes.count else { throw error("unexpected end of input in an array") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard bytes[i] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
            i += 1
            return .array(items)
        }
    }

    private mutating func string() throws(JSONError) -> String {
        i += 1
        // Without escapes (the usual string), one validation of the bytes as they are; small strings
        // are then stored inline, with no allocation at all. ASCII needs no validation: the generic
        // validator (unspecialized in the runtime) costs a metadata look-up per call.
        var end = i
        var ascii = true
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20
        {
            ascii = ascii && bytes[end] < 0x80
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            let s: String
            if ascii {
                s = String(decoding: bytes[i..<end], as: UTF8.self)
            } else {
                guard let valid = String(validating: bytes[i..<end], as: UTF8.self) else {
                    throw error("invalid UTF-8 in a string")
                }
                s = valid
            }
            i = end + 1
            return s
        }
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw error("unterminated string") }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                break
            }
            if c < 0x20 { throw error("control character in a string") }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                i += 1
                continue
            }
            i += 1
            guard i < bytes.count else { throw error("unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard bytes.count - i >= 6, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw error("lone surrogate")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("invalid surrogate pair") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(code) {
                    throw error("lone surrogate")
                }
                out += Array(String(Unicode.Scalar(code)!).utf8)
            default: throw error("invalid escape")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
        return s
    }

    private mutating func hex4() throws(JSONError) -> UInt32 {
        guard bytes.count - i >= 4 else { throw error("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - 48
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - 87
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - 55
            default: throw error("invalid \\u escape")
            }
            v = v * 16 + UInt32(d)
            i += 1
        }
        return v
    }

    private mutating func number() throws(JSONError) -> JSONValue {
        let start = i
        var isInteger = true
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { throw error("invalid number") }
        if bytes[i] == UInt8(ascii: "0") { i += 1 } else { while i < bytes.count, isDigit(bytes[i]) { i += 1 } }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw error("invalid number") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw error("invalid number") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        guard let d = Double(text) else { throw error("invalid number") }
        return .double(d)
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
}

/// Why a JSON text did not parse, with the byte offset.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}
