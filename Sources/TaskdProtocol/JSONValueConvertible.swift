/// A type with a JSON form of its own (`json`, `init?(json:)`), `Codable` through it: a member of a
/// reply encodes by its one encoder, and one this version cannot read is a `DecodingError.dataCorrupted`.
public protocol JSONValueConvertible: Codable {
    init?(json: JSONValue)
    var json: JSONValue { get }
}

extension JSONValueConvertible {
    public init(from decoder: any Decoder) throws {
        let json = try decoder.singleValueContainer().decode(JSONValue.self)
        guard let value = Self(json: json) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a \(Self.self)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(json)
    }
}
