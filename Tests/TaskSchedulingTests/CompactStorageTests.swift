import Testing

@testable import TaskScheduling

/// The compact forms that keep 10,000 tasks small behave as the plain values they replace.
@Suite("Compact storage: shared definition parts")
struct CompactStorageTests {
    /// Two definitions with equal options, calendar and handler, built apart.
    static func twins() throws -> (TaskDefinition, TaskDefinition) {
        func make(_ name: String) throws -> TaskDefinition {
            var d = TaskDefinition(
                key: TaskKey(kind: "processing", identifier: name), description: "a long description, on the heap",
                onCalendar: [try CalendarSpec(parsing: "daily")],
                handler: .command(CommandSpec(argv: ["/usr/local/bin/some-long-command", "--flag"])))
            d.queueLimit = 3
            return d
        }
        return (try make("a"), try make("b"))
    }

    @Test("SharedValues: equal parts of two definitions end up in one storage; each stays its own value")
    func sharedParts() throws {
        let (a, b) = try Self.twins()
        #expect(!a.$options.isIdentical(to: b.$options))
        var pool = SharedValues()
        let sharedA = pool.share(a)
        let sharedB = pool.share(b)
        #expect(sharedA == a && sharedB == b)
        #expect(sharedA.$options.isIdentical(to: sharedB.$options))
        func address<T>(_ array: [T]) -> UnsafeRawPointer? {
            array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }
        #expect(address(sharedA.onCalendar) == address(sharedB.onCalendar))
        guard case .command(let specA) = sharedA.handler, case .command(let specB) = sharedB.handler else {
            return #expect(Bool(false))
        }
        #expect(address(specA.argv) == address(specB.argv))
        #expect(specA.$options.isIdentical(to: specB.$options))

        // Copy on write: changing one task's setting leaves the other's alone.
        var changed = sharedB
        changed.queueLimit = 5
        changed.description = "changed"
        #expect(sharedA.queueLimit == 3 && sharedB.queueLimit == 3 && changed.queueLimit == 5)
        #expect(sharedA.description == "a long description, on the heap" && changed.description == "changed")
        #expect(!changed.$options.isIdentical(to: sharedA.$options))
        #expect(changed != sharedB && changed.key == sharedB.key)
    }
}
