/// The parameters of the errors `io.taskd.Scheduler` names, as a client reads them: each error
/// sets those its IDL lists (`NoSuchTask (target, known)`, `PermissionDenied (reason)`, …).
public struct SchedulerErrorParameters: Codable, Hashable, Sendable {
    public var target: String?
    public var known: [String]?
    public var matches: [String]?
    public var reason: String?
    public var runId: String?
    public var errors: [String]?

    public init(
        target: String? = nil, known: [String]? = nil, matches: [String]? = nil, reason: String? = nil,
        errors: [String]? = nil
    ) {
        self.target = target
        self.known = known
        self.matches = matches
        self.reason = reason
        self.errors = errors
    }

    /// Reads an error reply's parameters; a member of another type is left out.
    public init(parameters: [String: JSONValue]) {
        self = (try? JSONValueDecoder().decode(Self.self, from: .object(parameters))) ?? Self()
    }
}
