/// Something about a task as a whole, to be journaled: overdue, failing, paused, resumed, recovered.
public enum TaskAlert: Hashable, Sendable {
    /// No completed run for `within` µs (`ExpectSuccessWithinSec=`); `lastSuccess` nil: none ever.
    case overdue(TaskKey, lastSuccess: UInt64?, within: UInt64)
    /// `failures` runs in a row failed (`AlertAfterFailures=`); `run` is the last of them.
    case failing(TaskKey, failures: Int, run: Run)
    /// A run completed again after an overdue or failing alert (`from`: `overdue`, `failing`).
    case recovered(TaskKey, from: String, run: Run)
    /// The task was paused: by `taskctl pause`, or by `PauseAfterFailures=`.
    case paused(TaskKey, TaskPause)
    /// The pause ended: `taskctl resume`, or its `--until` passed.
    case resumed(TaskKey, reason: String)

    /// The task it is about.
    public var key: TaskKey {
        switch self {
        case .overdue(let k, _, _), .failing(let k, _, _), .recovered(let k, _, _), .paused(let k, _),
            .resumed(let k, _):
            return k
        }
    }
}
