/// Decodes a `Decodable` value from a `JSONValue`, as Foundation's `JSONDecoder` does with its default
/// strategies, without Foundation: a missing key, a wrong type or a number out of range throws the
/// standard `DecodingError`, with the path to the value. Foundation types decode through their own
/// `Codable` conformances (a `Date` from seconds since 2001, a `Data` from an array of bytes).
public struct JSONValueDecoder: Sendable {
    public init() {}

    /// `T` decoded from `value`. With `rejectingUnknownKeys`, a member of the top-level object that
    /// `T` does not name throws `DecodingError.dataCorrupted` at that member's path (for a Varlink
    /// call's parameters, where an unknown name is an error, not something to ignore).
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, rejectingUnknownKeys: Bool = false)
        throws -> T
    {
        try T(from: Reader(value: value, codingPath: [], rejectsUnknownKeys: rejectingUnknownKeys))
    }

    /// `T` decoded from JSON text; text that does not parse throws `DecodingError.dataCorrupted`.
    public func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        let value: JSONValue
        do {
            value = try JSONParser.parse(text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: error.description))
        }
        return try decode(type, from: value)
    }

    /// A short account of a decoding error: what was wrong and at which path ("steps: expected Int,
    /// found a string"), where `DecodingError`'s own description spells out its whole context.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func at(_ path: [any CodingKey]) -> String { path.isEmpty ? "the top level" : pathText(path) }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(at(context.codingPath + [key])): missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(at(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// A coding path as text: `a.b[2].c`.
    static func pathText(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue, key.stringValue == "Index \(index)" {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }
}

/// The decoder at one value: the single-value container, and the maker of the keyed and unkeyed ones.
private struct Reader: Decoder, SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    /// Whether an object member its keyed container's `Key` does not name is an error (only at the top).
    var rejectsUnknownKeys = false
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self, "an object") }
        if rejectsUnknownKeys, members.keys.contains(where: { Key(stringValue: $0) == nil }) {
            let unknown = members.keys.sorted().first { Key(stringValue: $0) == nil }!
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath + [JSONCodingKey(stringValue: unknown)], debugDescription: "unknown member"))
        }
        return KeyedDecodingContainer(KeyedReader<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([JSONValue].self, "an array") }
        return UnkeyedReader(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// The error for a value that is not `expected` (named `name`, or by its type).
    func mismatch(_ expected: Any.Type, _ name: String? = nil) -> DecodingError {
        let found: String
        switch value {
        case .null: found = "null"
        case .bool: found = "a boolean"
        case .int, .double: found = "a number"
        case .string: found = "a string"
        case .array: found = "an array"
        case .object: found = "an object"
        }
        let context = DecodingError.Context(
            codingPath: codingPath, debugDescription: "expected \(name ?? "\(expected)"), found \(found)")
        return value == .null ? .valueNotFound(expected, context) : .typeMismatch(expected, context)
    }

    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let b) = value else { throw mismatch(type) }
        return b
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let s) = value else { throw mismatch(type) }
        return s
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: throw mismatch(type)
        }
    }

    func decode(_ type: Float.Type) throws -> Float {
        let d = try decode(Double.self)
        guard Float(d).isFinite else { throw outOfRange(d, type) }
        return Float(d)
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        switch value {
        case .int(let i):
            guard let n = T(exactly: i) else { throw outOfRange(i, type) }
            return n
        case .double(let d):
            guard let n = T(exactly: d) else { throw outOfRange(d, type) }
            return n
        default:
            throw mismatch(type)
        }
    }

    func outOfRange(_ number: Any, _ type: Any.Type) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: "the number \(number) does not fit in \(type)"))
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return value as! T }  // a `JSONValue` member, as it is
        return try T(from: self)
    }
}

/// An object's members, by key.
private struct KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func reader(_ key: any CodingKey) throws -> Reader {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
        }
        return Reader(value: value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try reader(key).decodeNil() }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try reader(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try reader(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try reader(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try reader(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try reader(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reader(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reader(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reader(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try reader(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reader(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reader(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try reader(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try reader(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try reader(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try reader(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try reader(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try reader(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        Reader(value: members["super"] ?? .null, codingPath: codingPath + [JSONCodingKey.super])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        Reader(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

/// An array's elements, in order.
private struct UnkeyedReader: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The next element's decoder; the index moves on only once `body` succeeds, as JSONDecoder's does.
    mutating func next<T>(_ type: Any.Type, _ body: (Reader) throws -> T) throws -> T {
        let key = JSONCodingKey(intValue: currentIndex)
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath + [key], debugDescription: "the array has no more elements"))
        }
        let result = try body(Reader(value: elements[currentIndex], codingPath: codingPath + [key]))
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.decode(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try $0.decode(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next(type) { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([JSONValue].self) { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder { try next(JSONValue.self) { $0 } }
}
