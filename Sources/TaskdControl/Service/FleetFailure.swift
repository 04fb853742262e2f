/// Why the fleet could not be listed: etcd could not be reached, or refused (Varlink `FleetUnavailable`).
public struct FleetFailure: Error, Sendable, Hashable {
    public var reason: String

    public init(reason: String) { self.reason = reason }
}
