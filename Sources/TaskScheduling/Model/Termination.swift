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
