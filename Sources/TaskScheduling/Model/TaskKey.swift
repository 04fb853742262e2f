/// A task's identity: its kind (`appRefresh`, `processing`, …) and its identifier, unique per kind.
public struct TaskKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var kind: String
    public var identifier: String

    public init(kind: String, identifier: String) {
        self.kind = kind
        self.identifier = identifier
    }

    /// The task's name, which is its identifier (docs/control-protocol.md, "Targets").
    public var name: String { identifier }
    /// `kind:identifier`, the unambiguous form of a target.
    public var description: String { "\(kind):\(identifier)" }

    public static func < (a: TaskKey, b: TaskKey) -> Bool { (a.identifier, a.kind) < (b.identifier, b.kind) }

    /// Hashes the identifier alone (equal keys share it; two kinds of one identifier are rare):
    /// one string to hash per look-up instead of two.
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}
