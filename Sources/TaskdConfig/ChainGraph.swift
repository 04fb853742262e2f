import TaskScheduling

/// The links between tasks that `OnSuccess=`/`OnFailure=` (wakes) or `After=` (order) declare, as a
/// graph: a cycle of wakes would run its tasks for ever, a cycle of `After=` would leave them waiting
/// for each other, so the configuration refuses either (`ConfigLoader`).
enum ChainGraph {
    /// The tasks of a cycle of the links `edges` gives (targets, as a wake's), in the order they go
    /// (its first task the smallest key); nil if none.
    static func cycle(
        in definitions: [TaskKey: TaskDefinition], edges: (TaskDefinition) -> [String] = { $0.onSuccess + $0.onFailure }
    ) -> [TaskKey]? {
        // Only tasks with links can be on a cycle; most configurations have none (no graph to build).
        let linked = definitions.compactMapValues { d -> [String]? in
            let targets = edges(d)
            return targets.isEmpty ? nil : targets
        }
        guard !linked.isEmpty else { return nil }
        let byName = Dictionary(grouping: definitions.keys, by: \.identifier)
        let byKind = Dictionary(grouping: definitions.keys, by: \.kind)
        // Targets resolve as a wake's do: kind:identifier, else a name, else a kind.
        func resolve(_ target: String) -> [TaskKey] {
            if let colon = target.firstIndex(of: ":") {
                let key = TaskKey(
                    kind: String(target[..<colon]), identifier: String(target[target.index(after: colon)...]))
                return definitions[key] == nil ? [] : [key]
            }
            return byName[target] ?? byKind[target] ?? []
        }
        var next: [TaskKey: [TaskKey]] = [:]
        for (key, targets) in linked {
            next[key] = Set(targets.flatMap(resolve)).sorted()
        }
        // Depth-first, in key order: a task met again while on the path closes a cycle.
        var done: Set<TaskKey> = []
        var path: [TaskKey] = []
        var onPath: Set<TaskKey> = []
        func visit(_ key: TaskKey) -> [TaskKey]? {
            if let start = path.firstIndex(of: key), onPath.contains(key) { return Array(path[start...]) }
            guard done.insert(key).inserted else { return nil }
            path.append(key)
            onPath.insert(key)
            defer {
                path.removeLast()
                onPath.remove(key)
            }
            for target in next[key] ?? [] {
                if let cycle = visit(target) { return cycle }
            }
            return nil
        }
        // A task without links closes no cycle and leads nowhere: starting from the linked ones finds
        // the same first cycle as starting from every task.
        for key in linked.keys.sorted() {
            if let cycle = visit(key) { return cycle }
        }
        return nil
    }
}
