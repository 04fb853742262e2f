import TaskScheduling
import TaskdConfig

/// The daemon's own entries beside the runs': start-up, configuration, handlers' requests.
extension EventJournal {
    /// `count` acknowledged wakes replayed at start, `dropped` of them for tasks no longer there.
    func wakesRecovered(_ count: Int, dropped: Int) {
        guard count > 0 else { return }
        daemon(
            .wakesRecovered, 4,
            "replaying \(count - dropped) acknowledged wake(s) that had not finished before the daemon stopped"
                + (dropped == 0 ? "" : "; \(dropped) of them name a task that no longer exists"),
            [("TASKD_RECOVERED_WAKES", String(count - dropped))])
    }

    /// The diagnostics of a configuration loaded, each with its file and line.
    func configDiagnostics(_ diagnostics: [ConfigDiagnostic]) {
        for d in diagnostics {
            daemon(
                .configError, d.severity == .error ? 3 : 4, d.description,
                [("CONFIG_FILE", d.location.file), ("CONFIG_LINE", String(d.location.line))])
        }
    }

    /// A handler asked for its task's next run `micros` µs after `now`.
    func runRequested(_ key: TaskKey, in micros: UInt64, at now: ClockReading) {
        daemon(
            .runRequested, 6,
            "\(key.identifier): its handler asked for the next run in \(TimeSpan(microseconds: micros))",
            [
                ("TASK", key.identifier), ("TASK_KIND", key.kind),
                ("TASK_REQUESTED_USEC", String(now.realtime &+ micros)),
            ])
    }

    /// An abandoned Swift handler's run returned after all.
    func lateResult(_ runID: String) {
        daemon(
            .lateResult, 5, "run \(runID.prefix(8)) returned after it was abandoned; result ignored",
            [("TASK_RUN_ID", runID)])
    }

    /// `OnSuccess=`, `OnFailure=` and `OnOverdue=` name tasks: one that names none is said at load.
    /// Only tasks with such keys are looked at: a list of every task made after start-up's
    /// `malloc_trim` would stay resident as free heap (0.6 MiB at 10,000 tasks).
    func checkChains(_ tasks: [TaskDefinition], resolver: TargetResolver) {
        for d in tasks where !(d.onSuccess.isEmpty && d.onFailure.isEmpty && d.onOverdue.isEmpty) {
            for (name, targets) in [("OnSuccess", d.onSuccess), ("OnFailure", d.onFailure), ("OnOverdue", d.onOverdue)]
            {
                for target in targets where (try? resolver.resolve(target)) == nil {
                    daemon(.configError, 4, "\(d.key): \(name)=\(target) names no task; it is skipped")
                }
            }
        }
    }
}
