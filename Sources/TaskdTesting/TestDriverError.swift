/// Why `TaskTestDriver` could not start a run.
public enum TestDriverError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The daemon registers no Swift task of that name; `known` are those it does.
    case noSuchTask(String, known: [String])
    /// Attempts count from 1.
    case invalidAttempt(Int)
    /// The daemon's registrations are wrong (as `run()` would refuse to start): `TASK: problem` each.
    case invalidRegistration([String])
    /// The task took no run for the trigger (its task is paused, say).
    case noRunStarted(String)

    public var description: String {
        switch self {
        case .noSuchTask(let name, let known):
            return "no Swift task '\(name)' is registered; known: \(known.joined(separator: ", "))"
        case .invalidAttempt(let attempt): return "attempt \(attempt): attempts count from 1"
        case .invalidRegistration(let problems): return problems.joined(separator: "\n")
        case .noRunStarted(let name): return "\(name): the trigger started no run"
        }
    }
}
