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

/// An error a handler throws that has a Varlink error of its own (the daemon's refusals).
public protocol VarlinkErrorConvertible: Error {
    var varlinkError: VarlinkError { get }
}

/// A configuration that failed to load: its errors, each as file:line: message.
public protocol ConfigurationErrors: Error {
    var errors: [String] { get }
}

/// Why the fleet could not be listed: etcd could not be reached, or refused (Varlink `FleetUnavailable`).
public struct FleetFailure: Error, Sendable, Hashable {
    public var reason: String

    public init(reason: String) { self.reason = reason }
}

/// Why an upgrade in place did not happen (Varlink `UpgradeFailed`).
public struct UpgradeFailure: Error, Sendable, Hashable {
    public var reason: String

    public init(reason: String) { self.reason = reason }
}
