/// Why etcd could not answer: unreachable, refused, or an answer taskd could not read.
public struct FleetError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    /// True when etcd answered that the lease does not exist (it expired, or was revoked).
    public var leaseGone = false
    /// True when etcd answered, and refused (a permission its roles do not give): no other member
    /// answers otherwise, and etcd is not unreachable.
    public var refused = false

    init(_ description: String, leaseGone: Bool = false, refused: Bool = false) {
        self.description = description
        self.leaseGone = leaseGone
        self.refused = refused
    }
}
