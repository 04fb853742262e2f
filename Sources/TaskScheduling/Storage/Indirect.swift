/// A value kept on the heap behind one pointer, shared by copies until one of them changes it
/// (copy on write): for the large, seldom changed part of a struct stored once per task, whose
/// equal values tasks share (`SharedValues`).
@propertyWrapper
@usableFromInline
struct Indirect<Value: Hashable & Sendable>: Hashable, Sendable {
    // Mutated only through `wrappedValue`, and only once no other copy holds it: safe to share.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline var value: Value
        @usableFromInline init(_ value: Value) { self.value = value }
    }

    @usableFromInline var storage: Storage

    init(wrappedValue: Value) { storage = Storage(wrappedValue) }

    /// The value, read in place and changed in place once no other copy holds it.
    @inlinable
    var wrappedValue: Value {
        _read { yield storage.value }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.value) }
            yield &storage.value
        }
    }

    /// The wrapper itself: assigning an equal one shares its storage (see `SharedValues`).
    var projectedValue: Indirect<Value> {
        get { self }
        set { self = newValue }
    }

    /// True when both hold the same storage (not merely equal values).
    func isIdentical(to other: Self) -> Bool { storage === other.storage }

    @usableFromInline
    static func == (a: Self, b: Self) -> Bool { a.storage === b.storage || a.storage.value == b.storage.value }
    @usableFromInline
    func hash(into hasher: inout Hasher) { hasher.combine(storage.value) }
}
