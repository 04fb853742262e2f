/// What a reload changed: tasks added, removed, and changed (their run restarted), by key.
public struct ReloadDiff: Hashable, Sendable {
    public var added: [TaskKey] = []
    public var removed: [TaskKey] = []
    public var changed: [TaskKey] = []
    public var unchanged: [TaskKey] = []

    public init() {}

    public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }
}
