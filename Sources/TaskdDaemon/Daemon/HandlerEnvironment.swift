import TaskScheduling

#if canImport(Glibc)
    import Glibc
#endif

/// Builds a command's environment from scratch (nothing of the daemon's leaks): a fixed `PATH`,
/// the user's (User= or taskd's) `HOME`/`USER`/`LOGNAME`/`SHELL`, `STATE_DIRECTORY`, the run's `TASKD_*` variables
/// (docs/run-life.md, "How a command runs"), then the task's `Environment=` assignments, later ones winning.
enum HandlerEnvironment {
    static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// taskd's own `HOME`/`USER`/`LOGNAME`/`SHELL`, looked up once: a passwd lookup per run would
    /// be an NSS call (files, or sssd and LDAP over the network) on the event loop.
    static let ownUser: [String] = {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil else { return [] }
        let user = String(cString: entry.pw_name)
        return [
            "HOME=\(String(cString: entry.pw_dir))", "USER=\(user)", "LOGNAME=\(user)",
            "SHELL=\(String(cString: entry.pw_shell))",
        ]
    }()

    static func build(run: Run, spec: CommandSpec, stateDirectory: String) -> [String] {
        var assignments = ["PATH=\(path)"]
        if let user = spec.identity.userName {
            assignments += ["HOME=\(spec.identity.home ?? "/")", "USER=\(user)", "LOGNAME=\(user)"]
            if let shell = spec.identity.shell { assignments.append("SHELL=\(shell)") }
        } else {
            assignments += ownUser
        }
        assignments += [
            "STATE_DIRECTORY=\(stateDirectory)",
            "TASKD_TASK=\(run.key.identifier)",
            "TASKD_KIND=\(run.key.kind)",
            "TASKD_RUN_ID=\(run.id)",
            "TASKD_TRIGGER=\(run.trigger.rawValue)",
            "TASKD_ATTEMPT=\(run.attempt)",
            "TASKD_WAKE_ID=\(run.wakeID ?? "")",
            "TASKD_BUDGET_USEC=\(run.budget.microseconds)",
            "TASKD_DEADLINE_USEC=\(run.deadlineRealtime ?? 0)",
            "TASKD_NO_RETRY_EXIT_STATUS=\(RetryPolicy.noRetryExitStatus)",
            "TASKD_NOTIFY_FD=3",
            "TASKD_SCHEDULED_USEC=\(run.scheduledRealtime)",
        ]
        // A fleet run's claim: who holds it, and its fence token (only growing, slot by slot).
        if let token = run.fenceToken { assignments.append("TASKD_FENCE_TOKEN=\(token)") }
        if let host = run.fleetHost { assignments.append("TASKD_FLEET_HOST=\(host)") }
        // The checkpoint an earlier run kept (`CHECKPOINT=`), as it gave it.
        if let checkpoint = run.checkpoint { assignments.append("TASKD_CHECKPOINT=\(checkpoint)") }
        // The names above are distinct: only the task's own assignments can repeat one.
        guard !spec.environment.isEmpty else { return assignments }
        assignments += spec.environment
        // Keep the last assignment of each name, in first-seen order.
        var order: [String] = []
        var values: [String: String] = [:]
        for a in assignments {
            let name = String(a.prefix { $0 != "=" })
            if values[name] == nil { order.append(name) }
            values[name] = a
        }
        return order.map { values[$0]! }
    }
}
