import TaskScheduling

/// The wakes between tasks that `OnSuccess=` and `OnFailure=` declare, as a graph: a cycle in it
/// would wake its tasks for ever, so the configuration refuses one (`ConfigLoader`).
enum ChainGraph {
    /// The tasks of a cycle, in the order the wakes go (its first task the smallest key); nil if none.
    static func cycle(in definitions: [TaskKey: TaskDefinition]) -> [TaskKey]? {
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
        for (key, d) in definitions {
            next[key] = Set((d.onSuccess + d.onFailure).flatMap(resolve)).sorted()
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
        for key in definitions.keys.sorted() {
            if let cycle = visit(key) { return cycle }
        }
        return nil
    }
}
