import Testing

@testable import TaskScheduling

/// The compact forms that keep 10,000 tasks small behave as the plain values they replace.
@Suite("Compact storage: calendar chains, out-of-line fields, shared definition parts")
struct CompactStorageTests {
    @Test("a chain of one component and one of several index, compare and hash like their arrays")
    func chains() throws {
        let one = CalendarComponent(start: 5)
        let range = CalendarComponent(start: 8, stop: 14, repeat: 2)
        let single = CalendarChain([one])
        let several = CalendarChain([one, range])
        #expect(Array(single) == [one])
        #expect(Array(several) == [one, range])
        #expect(single.count == 1 && several.count == 2 && CalendarChain([]).isEmpty)
        #expect(single == [one] && several == [one, range] && single != several)
        #expect(single.hashValue == CalendarChain([one]).hashValue)
        // Parsed twice, and built by hand: reload compares definitions, so these must be equal.
        let parsed = try CalendarSpec(parsing: "*-*-* 08,12..14/2:05:00")
        #expect(parsed == (try CalendarSpec(parsing: "*-*-* 08,12..14/2:05:00")))
        #expect(parsed.minute == [one])
        #expect(
            parsed.hour.map(Array.init) == [
                CalendarComponent(start: 8), CalendarComponent(start: 12, stop: 14, repeat: 2),
            ])
        #expect(parsed.description == "*-*-* 08,12..14/2:05:00")
    }

    struct Holder: Hashable {
        @OutOfLine var run: String?
    }

    @Test("an out-of-line field reads back what was set, copies keep their own, equality is by value")
    func outOfLine() {
        var a = Holder(run: nil)
        #expect(a.run == nil)
        a.run = "first"
        let copy = a
        a.run = "second"
        #expect(copy.run == "first" && a.run == "second")
        a.run = nil
        #expect(a.run == nil && a != copy)
        let twin = Holder(run: "first")
        #expect(twin == copy && twin.hashValue == copy.hashValue)
    }

    @Test("a source path reads back as given, split at its last slash or not at all")
    func sourcePaths() {
        for path in ["swift", "", "/", "/x", "x/", "/etc/taskd/tasks.d/appRefresh.task", "a//b", "tasks.d/b.task"] {
            #expect(SourcePath(path).description == path, "\(path)")
        }
        let split = SourcePath("/etc/taskd/tasks.d/appRefresh.task")
        #expect(split.folder == "/etc/taskd/tasks.d" && split.name == "appRefresh.task")
        #expect(SourcePath("swift").folder == nil && SourcePath("/x").folder == "")
        var d = commandTask("a")
        d.source = "/srv/tasks/a.task"
        #expect(d.source == "/srv/tasks/a.task" && d.sourcePath.name == "a.task")
    }

    struct Instants: Hashable {
        @PackedInstant var at: UInt64? = nil
    }

    @Test("a packed instant reads back nil, 0 and the largest instant; it takes 8 bytes, not 16")
    func packedInstants() {
        var holder = Instants()
        #expect(holder.at == nil)
        for value: UInt64? in [0, 1, UInt64.max - 1, nil, 42] {
            holder.at = value
            #expect(holder.at == value)
        }
        #expect(Instants(at: 7) == Instants(at: 7) && Instants(at: 7) != Instants(at: nil))
        #expect(MemoryLayout<Instants>.size == 8 && MemoryLayout<UInt64?>.size == 9)
    }

    /// Two definitions with equal options, calendar and handler, built apart.
    static func twins() throws -> (TaskDefinition, TaskDefinition) {
        func make(_ name: String) throws -> TaskDefinition {
            var d = TaskDefinition(
                key: TaskKey(kind: "processing", identifier: name), description: "a long description, on the heap",
                onCalendar: [try CalendarSpec(parsing: "daily")],
                handler: .command(CommandSpec(argv: ["/usr/local/bin/some-long-command", "--flag"])),
                source: "/etc/taskd/tasks.d/\(name).task")
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
        func address(_ string: String?) -> UnsafeRawPointer? {
            string?.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
        }
        // The folder (17 bytes, on the heap) is stored once; each keeps its own path.
        #expect(address(a.sourcePath.folder) != address(b.sourcePath.folder))
        #expect(address(sharedA.sourcePath.folder) == address(sharedB.sourcePath.folder))
        #expect(sharedA.source == "/etc/taskd/tasks.d/a.task" && sharedB.source == "/etc/taskd/tasks.d/b.task")

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
