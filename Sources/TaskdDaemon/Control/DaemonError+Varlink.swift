import TaskdControl
import TaskdProtocol

/// The daemon's refusals as the errors `io.taskd.Scheduler` names.
extension DaemonError: VarlinkErrorConvertible {
    var varlinkError: VarlinkError {
        switch self {
        case .permissionDenied(let reason):
            VarlinkError(
                SchedulerInterface.permissionDenied, ["reason": .string(reason)],
                rejection: "permission denied: \(reason)")
        case .shuttingDown:
            VarlinkError(SchedulerInterface.shuttingDown)
        case .noSuchRun(let id):
            VarlinkError(SchedulerInterface.noSuchRun, ["runId": .string(id)])
        case .invalidRequest(let reason):
            VarlinkError(SchedulerInterface.invalidRequest, ["reason": .string(reason)])
        }
    }
}

/// A failed reload's errors, as `InvalidConfiguration` reports them.
extension ReloadFailure: ConfigurationErrors {}
