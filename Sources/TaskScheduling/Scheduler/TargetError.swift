/// A wake, cancel or status target that does not name exactly what it must.
public enum TargetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing matched; `known` lists every task as `kind:identifier`.
    case noSuchTask(target: String, known: [String])
    /// Several tasks matched where one was required; `matches` lists them.
    case ambiguous(target: String, matches: [String])

    public var description: String {
        switch self {
        case .noSuchTask(let t, let known):
            return "no task matches '\(t)'; known tasks: \(known.isEmpty ? "(none)" : known.joined(separator: ", "))"
        case .ambiguous(let t, let matches):
            return "'\(t)' is ambiguous; it matches \(matches.joined(separator: ", "))"
        }
    }
}
