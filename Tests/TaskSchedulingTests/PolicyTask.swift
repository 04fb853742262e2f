@testable import TaskScheduling

/// A command task with run-semantics settings.
func policyTask(
    _ name: String, kind: String = "processing", overlap: OverlapPolicy = .coalesce, queueLimit: Int = 8,
    maxAttempts: Int = 1, backoff: UInt64 = 1, backoffMax: UInt64 = 300, jitter: Double = 0, budget: UInt64 = 30,
    grace: UInt64 = 5
) -> TaskDefinition {
    var d = commandTask(name, kind: kind, budget: budget, grace: grace)
    d.overlap = overlap
    d.queueLimit = queueLimit
    d.retry.maxAttempts = maxAttempts
    d.retry.backoff = .seconds(backoff)
    d.retry.backoffMax = .seconds(backoffMax)
    d.retry.jitter = jitter
    return d
}

extension Scheduler {
    /// Wakes one task by name (test shorthand); the run it started, queued or joined.
    mutating func wakeOne(
        _ name: String, id: String? = nil, record: String? = nil, at now: ClockReading
    ) -> (run: Run, disposition: WakeDisposition, trace: [String]) {
        let key = tasks.keys.first { $0.identifier == name }!
        let (result, actions) = wake(key: key, wakeID: id, record: record, at: now)
        return (result!.run, result!.disposition, actions.trace)
    }
}
