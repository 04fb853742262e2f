import TaskScheduling

/// The metrics of every task and of taskd, rendered from the scheduler and the counters: what
/// `taskctl metrics`, Varlink `Metrics` and `MetricsFile=` give. Sparse where a value is known only
/// for some tasks (a last success, failures in a row): a missing series means none.
enum MetricsReport {
    static func render(_ scheduler: Scheduler, counters: MetricCounters, now: ClockReading, prometheus: Bool = false)
        -> [UInt8]
    {
        // One pass over the tasks, in key order, reading each state in place.
        let tasks = scheduler.tasks.map(inPlace: {
            ($0.definition.key, $0.definition.handler.label, $0.nextElapseRealtime(now: now))
        })
        let keys = tasks.map(\.0)
        var m = OpenMetricsText(capacity: 256 + keys.count * 200, prometheus: prometheus)
        m.family("taskd_tasks", "gauge", "Tasks configured.")
        m.sample("taskd_tasks", String(keys.count))
        m.family("taskd_runs_active", "gauge", "Runs whose handler runs now.")
        m.sample("taskd_runs_active", String(scheduler.activeCount))
        m.family("taskd_runs_waiting", "gauge", "Runs waiting: for a slot, for conditions, or behind a run.")
        m.sample("taskd_runs_waiting", String(scheduler.runs.count - scheduler.activeCount))
        m.family("taskd_wakes", "counter", "Wake requests served since taskd started.")
        m.sample("taskd_wakes_total", String(counters.wakes))

        m.family("taskd_task_info", "gauge", "One per task, with its handler.")
        for (key, handler, _) in tasks {
            m.sample("taskd_task_info", key: key, labels: [("handler", handler)], "1")
        }
        m.family("taskd_task_next_run_timestamp_seconds", "gauge", "When a timer of the task elapses next.")
        for case (let key, _, let realtime?) in tasks {
            m.sample("taskd_task_next_run_timestamp_seconds", key: key, OpenMetricsText.seconds(realtime))
        }
        let health = keys.map { ($0, scheduler.health(of: $0)) }
        m.family("taskd_task_last_success_timestamp_seconds", "gauge", "When the task's last completed run ended.")
        for (key, h) in health {
            if let last = h.lastSuccess {
                m.sample("taskd_task_last_success_timestamp_seconds", key: key, OpenMetricsText.seconds(last))
            }
        }
        m.family("taskd_task_consecutive_failures", "gauge", "Runs that failed in a row since the last completed one.")
        for (key, h) in health where h.consecutiveFailures > 0 {
            m.sample("taskd_task_consecutive_failures", key: key, String(h.consecutiveFailures))
        }
        m.family("taskd_task_overdue", "gauge", "1 while no run completed for ExpectSuccessWithinSec=.")
        for (key, h) in health where h.overdue { m.sample("taskd_task_overdue", key: key, "1") }
        m.family("taskd_task_paused", "gauge", "1 while the task is paused.")
        for (key, h) in health where h.pause != nil { m.sample("taskd_task_paused", key: key, "1") }

        m.family("taskd_runs", "counter", "Runs ended since taskd started, by outcome.")
        let counted = counters.tasks.keys.sorted()
        for key in counted {
            for (i, outcome) in RunOutcome.allCases.enumerated() where counters.tasks[key]!.outcomes[i] > 0 {
                m.sample(
                    "taskd_runs_total", key: key, labels: [("outcome", outcome.rawValue)],
                    String(counters.tasks[key]!.outcomes[i]))
            }
        }
        m.family("taskd_fleet_claims", "counter", "Claims of fleet runs since taskd started, by result.")
        for key in counted where counters.tasks[key]!.fleet.contains(where: { $0 > 0 }) {
            for (i, result) in MetricCounters.FleetResult.allCases.enumerated() {
                m.sample(
                    "taskd_fleet_claims_total", key: key, labels: [("result", result.rawValue)],
                    String(counters.tasks[key]!.fleet[i]))
            }
        }
        m.family("taskd_run_duration_seconds", "histogram", "How long runs ran, since taskd started.")
        for key in counted {
            let c = counters.tasks[key]!
            var cumulative: UInt64 = 0
            for (i, bound) in (MetricCounters.bounds + [.infinity]).enumerated() {
                cumulative += c.buckets[i]
                m.sample(
                    "taskd_run_duration_seconds_bucket", key: key, labels: [("le", OpenMetricsText.number(bound))],
                    String(cumulative))
            }
            m.sample("taskd_run_duration_seconds_count", key: key, String(cumulative))
            m.sample("taskd_run_duration_seconds_sum", key: key, String(c.durationSum))
        }
        return m.finish()
    }
}
