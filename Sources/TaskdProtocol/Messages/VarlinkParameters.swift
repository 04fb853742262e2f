/// A method's parameters: decoded from a call (an unknown name, a missing one or a wrong type is a
/// `ParameterError` naming it), encoded by a client.
public protocol VarlinkParameters: Codable, Sendable {
    /// Checks what the types cannot say (a name not empty, a number in range).
    func validate() throws(ParameterError)
}

extension VarlinkParameters {
    public func validate() throws(ParameterError) {}

    /// Decodes and validates a call's parameters.
    public init(parameters: [String: JSONValue]) throws(ParameterError) {
        do {
            self = try JSONValueDecoder().decode(Self.self, from: .object(parameters), rejectingUnknownKeys: true)
        } catch {
            throw ParameterError(error)
        }
        try validate()
    }

    /// The parameters as a call carries them.
    public var encodedParameters: [String: JSONValue] {
        // Only a non-finite number could fail, and no parameter is one.
        ((try? JSONValueEncoder().encode(self))?.objectValue) ?? [:]
    }
}
