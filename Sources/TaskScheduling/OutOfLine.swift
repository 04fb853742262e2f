/// An optional value kept on the heap, for a field that is nil most of the time: nil costs one
/// pointer where an inline optional costs the value's whole size in every instance. Setting it
/// allocates a new box; copies share a box and never see each other's changes (it is immutable).
@propertyWrapper
public struct OutOfLine<Value: Hashable & Sendable>: Hashable, Sendable {
    private final class Storage: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
    private var storage: Storage?

    public init(wrappedValue: Value?) { storage = wrappedValue.map(Storage.init) }

    public var wrappedValue: Value? {
        get { storage?.value }
        set { storage = newValue.map(Storage.init) }
    }

    public static func == (a: Self, b: Self) -> Bool { a.storage === b.storage || a.wrappedValue == b.wrappedValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(wrappedValue) }
}
