import TaskScheduling

extension FleetClaims {
    /// `taskctl why` of a fleet task: `reasons` (the scheduler's), with its run's pending claim in
    /// place of "running", and how the fleet shares the task now.
    package func why(
        _ key: TaskKey, _ reasons: [WhyReason], at now: ClockReading, in daemon: isolated Daemon
    ) -> [WhyReason] {
        guard let state = daemon.scheduler.tasks[key], state.definition.fleet != .host else { return reasons }
        let d = state.definition
        var reasons = reasons
        let mode = "Fleet=\(d.fleet)"
        if let id = state.currentRunID, let hold = holds[id], hold.pending,
            let i = reasons.firstIndex(where: { $0.code == .running })
        {
            reasons[i] = pendingReason(id, hold, at: now)
        }
        let first =
            reasons.firstIndex { ![.stopping, .sleeping, .draining, .paused].contains($0.code) } ?? reasons.count
        guard let fleet else {
            reasons.insert(
                WhyReason(.fleet, "\(mode), but taskd has no FleetEndpoints=: it runs on this host as Fleet=host"),
                at: first)
            return reasons
        }
        if let down = unreachable {
            let policy: String
            switch d.fleetUnavailable {
            case .skip: policy = "its runs do not run (FleetUnavailable=skip)"
            case .local: policy = "its runs run here unclaimed (FleetUnavailable=local)"
            case .wait:
                policy =
                    "its runs wait for it (FleetUnavailable=wait"
                    + (d.maxDefer.microseconds > 0 ? ", up to MaxDeferSec=\(d.maxDefer))" : ")")
            }
            reasons.insert(WhyReason(.fleetUnavailable, "etcd cannot be reached (\(down)): \(policy)"), at: first)
        }
        let share: String
        switch d.fleet {
        case .max(let limit): share = "at most \(limit) host(s) of the fleet run it at a time"
        default: share = "each calendar slot runs on one host of the fleet"
        }
        reasons.append(WhyReason(.fleet, "\(mode): \(share); this host is \(fleet.host)"))
        return reasons
    }

    /// What a run whose claim is pending waits for.
    private func pendingReason(_ id: String, _ hold: FleetHold, at now: ClockReading) -> WhyReason {
        let what: String
        switch hold.mode {
        case .max(let limit): what = "one of the task's \(limit) places in the fleet"
        default: what = "its slot of \(Timestamp.format(hold.slot))"
        }
        guard let unreachable = hold.unreachable else {
            return WhyReason(.claimPending, "run \(id.prefix(8)) waits for etcd to grant \(what)", runID: id)
        }
        let giveUp = hold.giveUpAt.map { "; gives up at \(Timestamp.format(now.realtime(at: $0)))" } ?? ""
        return WhyReason(
            .fleetUnavailable,
            "run \(id.prefix(8)) waits for etcd to claim \(what): \(unreachable) (FleetUnavailable=wait)\(giveUp)",
            runID: id)
    }
}
