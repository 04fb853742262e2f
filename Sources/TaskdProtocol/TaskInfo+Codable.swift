/// A `TaskInfo` as a `Codable` member of a reply: through its one encoder (`encodedJSON`, read
/// back) and `init?(json:)`; a task this version cannot read is a `DecodingError.dataCorrupted`.
extension TaskInfo: Codable {
    public init(from decoder: any Decoder) throws {
        let json = try decoder.singleValueContainer().decode(JSONValue.self)
        guard let task = TaskInfo(json: json) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a TaskInfo"))
        }
        self = task
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(json)
    }
}
