/// Resolves a target (design §2): a task name, a kind (every task of it), or `kind:identifier`.
///
/// A name wins over a kind: `appRefresh` means the task named `appRefresh` if there is one, and
/// every task of kind `appRefresh` otherwise.
public struct TargetResolver: Sendable {
    public private(set) var keys: [TaskKey]
    /// Each identifier's task, as its index in `keys` (no array per task: 10,000 tasks, 10,000 arrays).
    private var byIdentifier: [String: Int] = [:]
    /// The identifiers several kinds share, with all their tasks.
    private var shared: [String: [TaskKey]] = [:]
    private var byKind: [String: [TaskKey]] = [:]

    public init(keys: some Sequence<TaskKey>) {
        self.keys = keys.sorted()
        for (i, key) in self.keys.enumerated() {
            if let first = byIdentifier[key.identifier] {
                shared[key.identifier, default: [self.keys[first]]].append(key)
            } else {
                byIdentifier[key.identifier] = i
            }
            byKind[key.kind, default: []].append(key)
        }
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
        return named.isEmpty ? byKind[target] ?? [] : named
    }

    private func tasks(named identifier: String) -> [TaskKey] {
        shared[identifier] ?? byIdentifier[identifier].map { [keys[$0]] } ?? []
    }
}
