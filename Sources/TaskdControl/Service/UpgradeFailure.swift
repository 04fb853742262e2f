/// Why an upgrade in place did not happen (Varlink `UpgradeFailed`).
public struct UpgradeFailure: Error, Sendable, Hashable {
    public var reason: String

    public init(reason: String) { self.reason = reason }
}
