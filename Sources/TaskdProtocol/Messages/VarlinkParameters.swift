/// A method's parameters: decoded from a call (an unknown name, a missing one or a wrong type is a
/// `ParameterError` naming it), encoded by a client.
public protocol VarlinkParameters: Codable, Sendable {
    /// Decodes and validates a call's parameters: by default `init(decoding:)`; a method on a
    /// benchmark's path reads them by hand, refusing what `init(decoding:)` refuses.
    init(parameters: [String: JSONValue]) throws(ParameterError)
    /// Checks what the types cannot say (a name not empty, a number in range).
    func validate() throws(ParameterError)
}

extension VarlinkParameters {
    public func validate() throws(ParameterError) {}

    public init(parameters: [String: JSONValue]) throws(ParameterError) { try self.init(decoding: parameters) }

    /// Decodes a call's parameters through `JSONValueDecoder` (unknown members refused) and validates them.
    public init(decoding parameters: [String: JSONValue]) throws(ParameterError) {
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

/// One method of a Varlink interface: its full name and the types of its parameters and its reply,
/// which the server decodes and encodes and the client encodes and decodes alike.
public protocol VarlinkMethod {
    associatedtype Parameters: VarlinkParameters
    associatedtype Reply: VarlinkReplyParameters
    /// `interface.Method`, as a call names it.
    static var name: String { get }
}
