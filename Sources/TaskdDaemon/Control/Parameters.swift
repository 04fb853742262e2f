import TaskdProtocol

/// Typed access to a call's parameters; a wrong type or an unknown name is a `ParameterError`.
struct Parameters {
    let values: [String: JSONValue]

    init(_ values: [String: JSONValue]) { self.values = values }

    /// Rejects any parameter not in `allowed`, naming the first unknown one in sorted order.
    func only(_ allowed: [String]) throws(ParameterError) {
        // A few names: a linear search, with no set to build and no key to hash per call.
        guard values.keys.contains(where: { !allowed.contains($0) }) else { return }
        let unknown = values.keys.sorted().first { !allowed.contains($0) }!
        throw ParameterError(name: unknown, reason: "unknown parameter")
    }

    func string(_ name: String) throws(ParameterError) -> String {
        guard let v = values[name] else { throw ParameterError(name: name, reason: "missing") }
        guard case .string(let s) = v, !s.isEmpty else {
            throw ParameterError(name: name, reason: "must be a non-empty string")
        }
        return s
    }

    func optionalString(_ name: String) throws(ParameterError) -> String? {
        switch values[name] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw ParameterError(name: name, reason: "must be a string")
        }
    }

    func optionalInt(_ name: String, in range: ClosedRange<Int>) throws(ParameterError) -> Int? {
        switch values[name] {
        case nil, .null?: return nil
        case .int(let i)? where range.contains(Int(clamping: i)): return Int(i)
        default:
            throw ParameterError(
                name: name, reason: "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    func optionalBool(_ name: String) throws(ParameterError) -> Bool? {
        switch values[name] {
        case nil, .null?: return nil
        case .bool(let b)?: return b
        default: throw ParameterError(name: name, reason: "must be true or false")
        }
    }

    func optionalObject(_ name: String) throws(ParameterError) -> JSONValue? {
        switch values[name] {
        case nil, .null?: return nil
        case .object(let o)?: return .object(o)
        default: throw ParameterError(name: name, reason: "must be an object")
        }
    }
}

/// A parameter with the wrong type, missing, or not known.
struct ParameterError: Error {
    var name: String
    var reason: String
}
