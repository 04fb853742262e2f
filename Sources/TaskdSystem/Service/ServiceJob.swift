import CTaskdBus

/// What systemd is doing to taskd's unit as taskd is told to stop: a stop (`systemctl stop`, a
/// shutdown) or a restart (`systemctl restart`), read from the type of the job queued for the
/// unit (`org.freedesktop.systemd1.Job.JobType`). Blocking: ask on a thread of its own.
public enum ServiceJob {
    /// True when the job queued for this process's unit restarts it; false for a stop, no job,
    /// no service manager, or a manager that cannot be asked (stopping is the safe reading).
    public static func isRestart() -> Bool { isRestart(pendingType()) }

    /// Whether a job of `type` (nil: unknown) restarts the unit.
    public static func isRestart(_ type: String?) -> Bool {
        guard let type else { return false }
        return ["restart", "try-restart", "reload-or-restart", "reload-or-try-restart"].contains(type)
    }

    /// The job type, "" without a job; nil when systemd could not be asked.
    public static func pendingType() -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard taskd_service_job_type(&buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
