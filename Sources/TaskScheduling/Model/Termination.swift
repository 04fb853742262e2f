/// How a handler ended, as the runtime observed it.
public enum Termination: Hashable, Sendable {
    /// A command exited with this status.
    case exited(Int32)
    /// A command was killed by this signal.
    case signaled(Int32)
    /// A Swift handler returned.
    case returned
    /// A Swift handler threw; the error's description.
    case threw(String)
    /// A Swift handler threw `TaskError.doNotRetry`: it failed and asks for no retry.
    case threwNoRetry(String)
    /// A command's cgroup reached `MemoryMax=` and the kernel's OOM killer killed it (outcome
    /// `failed`, reason `oom`).
    case outOfMemory
    /// The handler could not be started at all (for example, the executable is missing).
    case spawnFailed(String)
    /// Its end was never seen: taskd stopped unexpectedly (a crash, `kill -9`) while it ran; why.
    /// Recorded at the next start (outcome `failed`, `failureReason` `lost`).
    case lost(String)

    /// True when the handler did its work: exit status 0 or a normal return.
    public var isSuccess: Bool {
        switch self {
        case .exited(0), .returned: return true
        default: return false
        }
    }
}

extension Termination: Codable {
    private enum CodingKeys: String, CodingKey { case kind, status, signal, message }

    /// `{"kind":"exited","status":N}`, `{"kind":"signaled","signal":N}`, `{"kind":"threw","message":…}`…
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .exited(let status):
            try c.encode("exited", forKey: .kind)
            try c.encode(status, forKey: .status)
        case .signaled(let signal):
            try c.encode("signaled", forKey: .kind)
            try c.encode(signal, forKey: .signal)
        case .returned: try c.encode("returned", forKey: .kind)
        case .outOfMemory: try c.encode("outOfMemory", forKey: .kind)
        case .threw(let message), .threwNoRetry(let message), .spawnFailed(let message), .lost(let message):
            try c.encode(kindWord, forKey: .kind)
            try c.encode(message, forKey: .message)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try c.decode(String.self, forKey: .kind)
        func message() throws -> String { try c.decode(String.self, forKey: .message) }
        switch kind {
        case "exited": self = .exited(try c.decode(Int32.self, forKey: .status))
        case "signaled": self = .signaled(try c.decode(Int32.self, forKey: .signal))
        case "returned": self = .returned
        case "outOfMemory": self = .outOfMemory
        case "threw": self = .threw(try message())
        case "threwNoRetry": self = .threwNoRetry(try message())
        case "spawnFailed": self = .spawnFailed(try message())
        case "lost": self = .lost(try message())
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: c, debugDescription: "unknown termination \(kind)")
        }
    }

    /// The case's name, as the run document writes it.
    private var kindWord: String {
        switch self {
        case .exited: return "exited"
        case .signaled: return "signaled"
        case .returned: return "returned"
        case .threw: return "threw"
        case .threwNoRetry: return "threwNoRetry"
        case .outOfMemory: return "outOfMemory"
        case .spawnFailed: return "spawnFailed"
        case .lost: return "lost"
        }
    }
}
