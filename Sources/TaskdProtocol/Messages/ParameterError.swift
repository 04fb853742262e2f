/// A call's parameter missing, of the wrong type, out of range or not known: answered
/// `org.varlink.service.InvalidParameter` naming it.
public struct ParameterError: Error, Hashable, Sendable {
    public var name: String
    public var reason: String

    public init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }

    /// The parameter a decoding error is about (the first member of its path) and what was wrong.
    public init(_ error: any Error) {
        guard let error = error as? DecodingError else {
            self.init(name: "", reason: "\(error)")
            return
        }
        let path: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            path = context.codingPath
        @unknown default: path = []
        }
        self.init(name: path.first?.stringValue ?? "", reason: JSONValueDecoder.describe(error))
    }

    /// Refuses an empty string for the parameter `name`.
    public static func nonEmpty(_ value: String, _ name: String) throws(ParameterError) {
        if value.isEmpty { throw ParameterError(name: name, reason: "must be a non-empty string") }
    }
}
