import Testing

@testable import TaskScheduling

@Suite("Targets: a name, a kind, or kind:identifier")
struct TargetResolverTests {
    let resolver = TargetResolver(keys: [
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
        let r = TargetResolver(keys: [
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
