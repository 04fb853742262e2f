/// Resolves a target (docs/control-protocol.md): a task name, a kind (every task of it), or `kind:identifier`.
///
/// A name wins over a kind: `appRefresh` means the task named `appRefresh` if there is one, and
/// every task of kind `appRefresh` otherwise.
public struct TargetResolver: Sendable {
    /// The tasks, found in key order (identifier, then kind): one identifier's tasks sit side by
    /// side and are found by binary search. The table is shared, not copied: make a resolver when
    /// needed (`Scheduler.resolver`) rather than keeping one while the table changes.
    private let tasks: TaskTable

    package init(tasks: TaskTable) { self.tasks = tasks }

    /// Every task the target names; throws when it names none.
    public func resolve(_ target: String) throws(TargetError) -> [TaskKey] {
        let matches = candidates(target)
        if matches.isEmpty { throw .noSuchTask(target: target, known: tasks.keys.map(\.description)) }
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
            return tasks.keys(named: identifier).filter { $0.kind == kind }
        }
        let named = tasks.keys(named: target)
        return named.isEmpty ? tasks.keys.filter { $0.kind == target } : named
    }
}
