/// A decoded Varlink method call: `{"method": …, "parameters": {…}, "more": …, "oneway": …}`.
public struct VarlinkCall: Hashable, Sendable {
    public var method: String
    public var parameters: [String: JSONValue]
    public var more: Bool
    public var oneway: Bool

    public init(method: String, parameters: [String: JSONValue] = [:], more: Bool = false, oneway: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
    }

    /// Decodes one message; the error says what was wrong, for an `InvalidRequest` reply.
    public init(message: [UInt8]) throws(VarlinkCallError) {
        let json: JSONValue
        do { json = try JSONParser.parse(message) } catch { throw VarlinkCallError(reason: error.description) }
        guard case .object(let o) = json else { throw VarlinkCallError(reason: "a call must be a JSON object") }
        guard let method = o["method"]?.stringValue, !method.isEmpty else {
            throw VarlinkCallError(reason: "'method' must be a non-empty string")
        }
        var parameters: [String: JSONValue] = [:]
        switch o["parameters"] {
        case nil, .null?: break
        case .object(let p)?: parameters = p
        default: throw VarlinkCallError(reason: "'parameters' must be an object")
        }
        func flag(_ name: String) throws(VarlinkCallError) -> Bool {
            switch o[name] {
            case nil, .null?: return false
            case .bool(let b)?: return b
            default: throw VarlinkCallError(reason: "'\(name)' must be a boolean")
            }
        }
        self.init(method: method, parameters: parameters, more: try flag("more"), oneway: try flag("oneway"))
    }

    /// The message bytes, NUL not included.
    public var encoded: [UInt8] {
        var o: [String: JSONValue] = ["method": .string(method)]
        if !parameters.isEmpty { o["parameters"] = .object(parameters) }
        if more { o["more"] = true }
        if oneway { o["oneway"] = true }
        return JSONValue.object(o).bytes
    }
}

/// A message that is not a valid Varlink call.
public struct VarlinkCallError: Error, Hashable, Sendable {
    public var reason: String
}
