/// An optional instant (µs) in 8 bytes: `UInt64.max`, which no clock reaches, stands for nil,
/// where `UInt64?` takes 16 with its padding. For the per-task fields most tasks leave nil.
@propertyWrapper
public struct PackedInstant: Hashable, Sendable {
    private var raw: UInt64

    public init(wrappedValue: UInt64?) { raw = Self.pack(wrappedValue) }

    public var wrappedValue: UInt64? {
        get { raw == .max ? nil : raw }
        set { raw = Self.pack(newValue) }
    }

    private static func pack(_ value: UInt64?) -> UInt64 {
        guard let value else { return .max }
        precondition(value != .max, "UInt64.max stands for no instant")
        return value
    }
}
