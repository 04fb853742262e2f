/// Resolves a target (design §2): a task name, a kind (every task of it), or `kind:identifier`.
///
/// A name wins over a kind: `appRefresh` means the task named `appRefresh` if there is one, and
/// every task of kind `appRefresh` otherwise.
public struct TargetResolver: Sendable {
    /// Every task, sorted by identifier then kind: one identifier's tasks sit side by side and are
    /// found by binary search (no dictionary: at 10,000 tasks, one took 400 KB).
    public private(set) var keys: [TaskKey]
    /// Each kind's tasks, as indices into `keys`.
    private var byKind: [String: [Int32]] = [:]

    public init(keys: some Sequence<TaskKey>) {
        self.keys = keys.sorted()
        for (i, key) in self.keys.enumerated() { byKind[key.kind, default: []].append(Int32(i)) }
    }

    /// Every task the target names; throws when it names none.
    public func resolve(_ target: String) throws(TargetError) -> [TaskKey] {
        let matches = candidates(target)
        if matches.isEmpty { throw .noSuchTask(target: target, known: keys.map(\.description)) }
        let byName = matches.filter { $0.identifier == target }
        if byName.count > 1 { throw .ambiguous(target: target, matches: byName.map(\.description)) }
        return matches
    }

    /// Exactly one task (for `status`): a name or `kind:identifier`, never a kind with several tasks.
    public func resolveOne(_ target: String) throws(TargetError) -> TaskKey {
        let matches = try resolve(target)
        guard matches.count == 1 else { throw .ambiguous(target: target, matches: matches.map(\.description)) }
        return matches[0]
    }

    private func candidates(_ target: String) -> [TaskKey] {
        if let colon = target.firstIndex(of: ":") {
            let kind = String(target[..<colon])
            let identifier = String(target[target.index(after: colon)...])
            return tasks(named: identifier).filter { $0.kind == kind }
        }
        let named = tasks(named: target)
        return named.isEmpty ? (byKind[target] ?? []).map { keys[Int($0)] } : named
    }

    private func tasks(named identifier: String) -> [TaskKey] {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].identifier < identifier { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < keys.count && keys[end].identifier == identifier { end += 1 }
        return Array(keys[low..<end])
    }
}
