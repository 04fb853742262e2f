/// Why etcd could not answer: unreachable, refused, the lease gone, or an answer taskd could not read.
public struct FleetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the failure means to the caller.
    public enum Kind: Hashable, Sendable {
        /// No answer (a transport failure, or a member that cannot serve now): another member may answer.
        case unreachable
        /// etcd answered that the lease does not exist (it expired, or was revoked).
        case leaseGone
        /// etcd answered, and refused (permissions, authentication, a request it will never take):
        /// no other member answers otherwise, and etcd is not unreachable.
        case refused
    }

    public var description: String
    public var kind: Kind
    /// True when etcd answered that the lease does not exist.
    public var leaseGone: Bool { kind == .leaseGone }
    /// True when etcd answered, and refused.
    public var refused: Bool { kind == .refused }

    init(_ description: String, kind: Kind = .unreachable) {
        self.description = description
        self.kind = kind
    }

    /// What a gRPC status code (etcd's `grpc-status`) means: NOT_FOUND (5) is the lease's
    /// ("requested lease not found", the only NOT_FOUND of the calls taskd makes);
    /// PERMISSION_DENIED (7), UNAUTHENTICATED (16), INVALID_ARGUMENT (3), FAILED_PRECONDITION (9),
    /// OUT_OF_RANGE (11) and UNIMPLEMENTED (12) are refusals; the rest (UNAVAILABLE 14,
    /// DEADLINE_EXCEEDED 4, CANCELLED 1, RESOURCE_EXHAUSTED 8, ABORTED 10, INTERNAL 13, UNKNOWN 2)
    /// say this member cannot answer now.
    public static func kind(grpcCode code: Int32) -> Kind {
        switch code {
        case 5: .leaseGone
        case 3, 7, 9, 11, 12, 16: .refused
        default: .unreachable
        }
    }

    /// The failure an answer carries, nil when it is a result: an HTTP status other than 200, no
    /// gRPC status (-1), or one other than OK. `message` (etcd's `grpc-message`) describes it, and
    /// `endpoint` names the member.
    public static func answered(httpStatus: Int, grpcStatus: Int32, message: String, endpoint: String) -> FleetError? {
        guard httpStatus == 200 else { return FleetError("etcd: \(endpoint): HTTP status \(httpStatus)") }
        guard grpcStatus >= 0 else { return FleetError("etcd: \(endpoint): an answer without a gRPC status") }
        guard grpcStatus != 0 else { return nil }
        let why = message.isEmpty ? "gRPC status \(grpcStatus)" : message
        return FleetError("etcd: \(endpoint): \(why)", kind: kind(grpcCode: grpcStatus))
    }

    /// A transport failure: curl's result `code` (never 0), described by curl's `text`. Each is
    /// taken as no answer from this member: the next one is asked.
    public static func transport(code: Int32, text: String, endpoint: String) -> FleetError {
        FleetError("etcd: \(endpoint): \(text) (curl error \(code))")
    }
}
