import Testing

@testable import TaskScheduling

@Suite("Targets: a name, a kind, or kind:identifier")
struct TargetResolverTests {
    let resolver = TaskSchedulingTests.resolver(for: [
        TaskKey(kind: "appRefresh", identifier: "weather"),
        TaskKey(kind: "appRefresh", identifier: "news"),
        TaskKey(kind: "processing", identifier: "sync"),
        TaskKey(kind: "appRefresh", identifier: "sync"),
        TaskKey(kind: "processing", identifier: "appRefresh"),
    ])

    @Test func byName() throws {
        #expect(try resolver.resolve("weather") == [TaskKey(kind: "appRefresh", identifier: "weather")])
    }

    @Test("a name wins over a kind of the same spelling")
    func nameBeforeKind() throws {
        #expect(try resolver.resolve("appRefresh") == [TaskKey(kind: "processing", identifier: "appRefresh")])
    }

    @Test func byKind() throws {
        #expect(try resolver.resolve("processing").map(\.identifier) == ["appRefresh", "sync"])
    }

    @Test func byKindAndIdentifier() throws {
        #expect(try resolver.resolve("processing:sync") == [TaskKey(kind: "processing", identifier: "sync")])
    }

    @Test("an unknown target lists every known task")
    func unknown() {
        #expect(
            throws: TargetError.noSuchTask(
                target: "nope",
                known: [
                    "processing:appRefresh", "appRefresh:news", "appRefresh:sync", "processing:sync",
                    "appRefresh:weather",
                ])
        ) { try resolver.resolve("nope") }
        #expect(throws: TargetError.self) { try resolver.resolve("appRefresh:nope") }
        #expect(throws: TargetError.self) { try resolver.resolve("") }
    }

    @Test("a name shared by two kinds is ambiguous and lists the matches")
    func ambiguous() {
        #expect(throws: TargetError.ambiguous(target: "sync", matches: ["appRefresh:sync", "processing:sync"])) {
            try resolver.resolve("sync")
        }
    }

    @Test("a name shared by three kinds resolves to all three, and kind:identifier to one of them")
    func sharedByThree() throws {
        let r = TaskSchedulingTests.resolver(for: [
            TaskKey(kind: "a", identifier: "x"), TaskKey(kind: "b", identifier: "x"),
            TaskKey(kind: "c", identifier: "x"), TaskKey(kind: "c", identifier: "y"),
        ])
        #expect(throws: TargetError.ambiguous(target: "x", matches: ["a:x", "b:x", "c:x"])) { try r.resolve("x") }
        #expect(try r.resolve("c:x") == [TaskKey(kind: "c", identifier: "x")])
        #expect(try r.resolve("y") == [TaskKey(kind: "c", identifier: "y")])
        #expect(try r.resolve("c").map(\.identifier) == ["x", "y"])
    }

    @Test("status needs exactly one task")
    func one() throws {
        #expect(try resolver.resolveOne("weather").identifier == "weather")
        #expect(throws: TargetError.self) { try resolver.resolveOne("processing") }
    }
}

extension TargetResolverTests {
    /// Every name, kind and `kind:identifier` over random keys (identifiers that are prefixes of
    /// others, shared by several kinds, spelled like kinds) against a linear filter of the keys.
    @Test("random keys: every target resolves as a linear search over the keys does")
    func matchesLinearSearch() {
        var random = SeededRandom(seed: 3)
        let kinds = ["a", "appRefresh", "processing", "x"]
        let names = ["x", "x1", "x10", "a", "b", "sync", "sync2", "appRefresh", "z"]
        for _ in 0..<200 {
            var keys = Set<TaskKey>()
            for _ in 0..<Int(random.next(upperBound: UInt64(12))) {
                keys.insert(
                    TaskKey(
                        kind: kinds[Int(random.next(upperBound: UInt64(kinds.count)))],
                        identifier: names[Int(random.next(upperBound: UInt64(names.count)))]))
            }
            let r = TaskSchedulingTests.resolver(for: keys)
            for target in names + kinds + keys.map(\.description) + ["a:nope", "nope"] {
                let linear: [TaskKey]
                if target.contains(":") {
                    linear = keys.filter { $0.description == target }
                } else {
                    let named = keys.filter { $0.identifier == target }
                    linear = (named.isEmpty ? keys.filter { $0.kind == target } : named).sorted()
                }
                let got = try? r.resolve(target)
                if linear.isEmpty {
                    #expect(got == nil, "\(target) in \(keys)")
                } else if linear.filter({ $0.identifier == target }).count > 1 {
                    #expect(got == nil, "\(target) is ambiguous in \(keys)")
                } else {
                    #expect(got == linear, "\(target) in \(keys)")
                }
            }
        }
    }
}

/// A resolver over a table that holds a task for each key.
func resolver(for keys: some Sequence<TaskKey>) -> TargetResolver {
    var table = TaskTable()
    let start = ClockReading(monotonic: 1_000_000, realtime: 1_700_000_000_000_000)
    for key in keys {
        table[key] = TaskState(definition: commandTask(key.identifier, kind: key.kind), daemonStart: start)
    }
    return TargetResolver(tasks: table)
}
