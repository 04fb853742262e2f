import TaskScheduling

/// What taskd counts for its metrics since it started: wakes served, and each task's runs by
/// outcome with a histogram of their durations.
struct MetricCounters: Sendable {
    /// The upper bounds of the duration histogram's buckets, in seconds (`+Inf` follows).
    static let bounds: [Double] = [0.01, 0.1, 1, 10, 60, 300, 1800, 3600]

    struct PerTask: Sendable {
        /// Runs ended, by `RunOutcome.allCases` index.
        var outcomes = [UInt64](repeating: 0, count: RunOutcome.allCases.count)
        /// Runs that started and ended, per bucket of `bounds` (not cumulative), and their total time.
        var buckets = [UInt64](repeating: 0, count: MetricCounters.bounds.count + 1)
        var durationSum: Double = 0
        /// Fleet claims of the task's runs, by `FleetResult`; all 0 for a task of `Fleet=host`.
        var fleet = [UInt64](repeating: 0, count: FleetResult.allCases.count)
    }

    /// How a fleet run's claim went (`taskd_fleet_claims_total`'s `result` label).
    enum FleetResult: String, CaseIterable {
        /// This host held it, and the run ran.
        case won
        /// Another host held or ran the slot (`elsewhere`).
        case lost
        /// Held, then lost unrenewed while the run ran (`fence-lost`).
        case fenced
        /// etcd could not be reached (`fleet-unavailable`, or run unclaimed with `FleetUnavailable=local`).
        case unavailable
    }

    var wakes: UInt64 = 0
    var tasks: [TaskKey: PerTask] = [:]

    /// Counts a run that ended.
    mutating func ended(_ run: Run) {
        guard let outcome = run.outcome, let index = RunOutcome.allCases.firstIndex(of: outcome) else { return }
        tasks[run.key, default: PerTask()].outcomes[index] += 1
        if let result = Self.fleetResult(run) {
            tasks[run.key]!.fleet[FleetResult.allCases.firstIndex(of: result)!] += 1
        }
        if let duration = run.duration {
            let seconds = Double(duration) / 1_000_000
            let bucket = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
            tasks[run.key]!.buckets[bucket] += 1
            tasks[run.key]!.durationSum += seconds
        }
    }

    /// How the claim of a run went; nil for a run of `Fleet=host`.
    static func fleetResult(_ run: Run) -> FleetResult? {
        switch run.cancelReason {
        case .elsewhere?: return .lost
        case .fenceLost?: return .fenced
        case .fleetUnavailable?: return .unavailable
        default: return run.fleetHost == nil ? nil : run.fenceToken == nil ? .unavailable : .won
        }
    }
}
