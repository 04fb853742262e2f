import TaskdProtocol

/// A Varlink error reply to a call, and what to journal as the call's rejection (nil: nothing).
public struct VarlinkError: Error, Hashable, Sendable, VarlinkErrorConvertible {
    public var name: String
    public var parameters: [String: JSONValue]
    public var rejection: String?

    public init(_ name: String, _ parameters: [String: JSONValue] = [:], rejection: String? = nil) {
        self.name = name
        self.parameters = parameters
        self.rejection = rejection
    }

    public var varlinkError: VarlinkError { self }
}
