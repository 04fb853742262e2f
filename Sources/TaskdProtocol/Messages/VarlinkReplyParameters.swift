/// A method's reply: encoded by the server (through `JSONValueEncoder`, or written straight to
/// bytes by a reply that is sent often or large), decoded by a client.
public protocol VarlinkReplyParameters: Codable, Sendable {
    /// The parameters as one JSON object's text, members in sorted order.
    func encodedParameters() throws -> [UInt8]
}

extension VarlinkReplyParameters {
    public func encodedParameters() throws -> [UInt8] { try JSONValueEncoder().encode(self).bytes }

    /// Decodes a reply's parameters.
    public init(parameters: [String: JSONValue]) throws {
        self = try JSONValueDecoder().decode(Self.self, from: .object(parameters))
    }
}
