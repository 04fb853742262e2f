/// A Varlink reply: parameters, or an error name with parameters, and whether more replies follow.
public struct VarlinkReply: Hashable, Sendable {
    public var parameters: [String: JSONValue]
    public var error: String?
    public var continues: Bool

    public init(parameters: [String: JSONValue] = [:], continues: Bool = false) {
        self.parameters = parameters
        self.error = nil
        self.continues = continues
    }

    public static func error(_ name: String, _ parameters: [String: JSONValue] = [:]) -> VarlinkReply {
        var r = VarlinkReply(parameters: parameters)
        r.error = name
        return r
    }

    /// Parameters already written as one JSON object (`JSONObjectWriter`), sent as they are in place
    /// of `parameters`: for replies sent often, such as the runs a wake started.
    public var encodedParameters: [UInt8]?

    /// A reply whose parameters are already JSON object text.
    public init(encodedParameters: [UInt8], continues: Bool = false) {
        self.parameters = [:]
        self.error = nil
        self.continues = continues
        self.encodedParameters = encodedParameters
    }

    /// The message bytes, NUL not included.
    public var encoded: [UInt8] {
        if let encodedParameters, error == nil {
            // The members in sorted order, as `JSONValue` prints them: continues, parameters.
            var out = Array((continues ? #"{"continues":true,"parameters":"# : #"{"parameters":"#).utf8)
            out.reserveCapacity(out.count + encodedParameters.count + 1)
            out.append(contentsOf: encodedParameters)
            out.append(UInt8(ascii: "}"))
            return out
        }
        var o: [String: JSONValue] = ["parameters": .object(parameters)]
        if let error { o["error"] = .string(error) }
        if continues { o["continues"] = true }
        return JSONValue.object(o).bytes
    }

    /// Decodes a reply message.
    public init(message: [UInt8]) throws(VarlinkCallError) {
        let json: JSONValue
        do { json = try JSONParser.parse(message) } catch { throw VarlinkCallError(reason: error.description) }
        guard case .object(let o) = json else { throw VarlinkCallError(reason: "a reply must be a JSON object") }
        self.parameters = o["parameters"]?.objectValue ?? [:]
        self.error = o["error"]?.stringValue
        self.continues = o["continues"]?.boolValue ?? false
    }
}
