/// Encodes an `Encodable` value as a `JSONValue`, as Foundation's `JSONEncoder` does with its default
/// strategies, without Foundation: nil optionals are left out of objects, a value that encodes
/// nothing is `{}`, and a non-finite number or an integer above `Int64.max` throws
/// `EncodingError.invalidValue`. Foundation types encode through their own `Codable` conformances.
/// `JSONValue` writes object members in key order, as `JSONEncoder`'s `.sortedKeys` does.
public struct JSONValueEncoder: Sendable {
    public init() {}

    /// `value` as JSON.
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = Node()
        try value.encode(to: Writer(node: root, codingPath: []))
        return root.value
    }
}

/// One value being encoded: containers hand out nodes for their members, filled in later.
private final class Node {
    enum Content {
        case unset
        case value(JSONValue)
        case array([Node])
        case object([String: Node])
    }

    var content = Content.unset

    /// The finished value; a node nothing was encoded into is an empty object, as in `JSONEncoder`.
    var value: JSONValue {
        switch content {
        case .unset: return .object([:])
        case .value(let v): return v
        case .array(let nodes): return .array(nodes.map(\.value))
        case .object(let nodes): return .object(nodes.mapValues(\.value))
        }
    }

    /// A new node for `key` of this object (made an object first if it is not one).
    func member(_ key: String) -> Node {
        let node = Node()
        var members: [String: Node] = [:]
        if case .object(let existing) = content { members = existing }
        content = .unset  // the dictionary is uniquely referenced while it changes
        members[key] = node
        content = .object(members)
        return node
    }

    /// A new node at the end of this array (made an array first if it is not one).
    func element() -> Node {
        let node = Node()
        var elements: [Node] = []
        if case .array(let existing) = content { elements = existing }
        content = .unset
        elements.append(node)
        content = .array(elements)
        return node
    }

    var count: Int {
        if case .array(let elements) = content { return elements.count }
        return 0
    }

    func makeObject() { if case .object = content {} else { content = .object([:]) } }
    func makeArray() { if case .array = content {} else { content = .array([]) } }
}

/// The encoder at one node: the single-value container, and the maker of the keyed and unkeyed ones.
private struct Writer: Encoder, SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedWriter<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedWriter(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func set(_ value: JSONValue) { node.content = .value(value) }

    func encodeNil() { set(.null) }
    func encode(_ value: Bool) { set(.bool(value)) }
    func encode(_ value: String) { set(.string(value)) }

    func encode(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "\(value) is not a JSON number"))
        }
        set(.double(value))
    }

    func encode(_ value: Float) throws { try encode(Double(value)) }

    func integer<T: FixedWidthInteger>(_ value: T) throws {
        guard let n = Int64(exactly: value) else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "\(value) is above Int64.max"))
        }
        set(.int(n))
    }

    func encode(_ value: Int) throws { try integer(value) }
    func encode(_ value: Int8) throws { try integer(value) }
    func encode(_ value: Int16) throws { try integer(value) }
    func encode(_ value: Int32) throws { try integer(value) }
    func encode(_ value: Int64) throws { try integer(value) }
    func encode(_ value: UInt) throws { try integer(value) }
    func encode(_ value: UInt8) throws { try integer(value) }
    func encode(_ value: UInt16) throws { try integer(value) }
    func encode(_ value: UInt32) throws { try integer(value) }
    func encode(_ value: UInt64) throws { try integer(value) }
    func encode<T: Encodable>(_ value: T) throws {
        if T.self == JSONValue.self { return set(value as! JSONValue) }  // a `JSONValue` member, as it is
        try value.encode(to: self)
    }
}

/// An object's members, by key.
private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    func writer(_ key: any CodingKey) -> Writer {
        Writer(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }

    func encodeNil(forKey key: Key) { writer(key).encodeNil() }
    func encode(_ value: Bool, forKey key: Key) { writer(key).encode(value) }
    func encode(_ value: String, forKey key: Key) { writer(key).encode(value) }
    func encode(_ value: Double, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: Float, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: Int, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: Int8, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: Int16, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: Int32, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: Int64, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: UInt, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: UInt8, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: UInt16, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: UInt32, forKey key: Key) throws { try writer(key).encode(value) }
    func encode(_ value: UInt64, forKey key: Key) throws { try writer(key).encode(value) }
    func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try writer(key).encode(value) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        writer(key).container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { writer(key).unkeyedContainer() }
    func superEncoder() -> any Encoder { writer(JSONCodingKey.super) }
    func superEncoder(forKey key: Key) -> any Encoder { writer(key) }
}

/// An array's elements, in order.
private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    var count: Int { node.count }

    func writer() -> Writer {
        let key = JSONCodingKey(intValue: node.count)
        return Writer(node: node.element(), codingPath: codingPath + [key])
    }

    func encodeNil() { writer().encodeNil() }
    func encode(_ value: Bool) { writer().encode(value) }
    func encode(_ value: String) { writer().encode(value) }
    func encode(_ value: Double) throws { try writer().encode(value) }
    func encode(_ value: Float) throws { try writer().encode(value) }
    func encode(_ value: Int) throws { try writer().encode(value) }
    func encode(_ value: Int8) throws { try writer().encode(value) }
    func encode(_ value: Int16) throws { try writer().encode(value) }
    func encode(_ value: Int32) throws { try writer().encode(value) }
    func encode(_ value: Int64) throws { try writer().encode(value) }
    func encode(_ value: UInt) throws { try writer().encode(value) }
    func encode(_ value: UInt8) throws { try writer().encode(value) }
    func encode(_ value: UInt16) throws { try writer().encode(value) }
    func encode(_ value: UInt32) throws { try writer().encode(value) }
    func encode(_ value: UInt64) throws { try writer().encode(value) }
    func encode<T: Encodable>(_ value: T) throws { try writer().encode(value) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        writer().container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { writer().unkeyedContainer() }
    func superEncoder() -> any Encoder { writer() }
}
