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

    /// The message bytes, NUL not included.
    public var encoded: [UInt8] {
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
