import TaskScheduling
import TaskdControl
import TaskdFleet
import TaskdProtocol

/// Runs of fleet tasks. The scheduler starts them as any other; before the handler starts, the
/// daemon claims the run's slot in etcd (`Fleet=once`: a calendar slot, by its nominal time) or
/// one of the task's places (`Fleet=max:N`). Won: the handler starts, with the claim's fence
/// token. Lost: the run ends `cancelled`, reason `elsewhere`, naming the host that holds the slot.
/// etcd unreachable: `FleetUnavailable=` decides. A claim whose lease this host could not renew
/// in time cancels its run (`fence-lost`); a slot lost to a host whose claim lapsed before the
/// slot was done is taken over (trigger `takeover`).
extension Daemon {
    /// True when a run of this task is claimed in the fleet before it starts: every run of
    /// `Fleet=max:N`; for `Fleet=once`, the runs of calendar slots (timers, catch-ups, takeovers,
    /// and a slot's run cut short by a crash or restart, run again), the only ones every host names
    /// alike. A wake or a retry runs on its host.
    static func claims(_ run: Run, _ definition: TaskDefinition) -> Bool {
        switch definition.fleet {
        case .host: return false
        case .max: return true
        case .once:
            return !definition.onCalendar.isEmpty && [.timer, .catchup, .takeover, .resume].contains(run.trigger)
        }
    }

    func claim(_ run: Run, _ definition: TaskDefinition, _ fleet: any FleetPort) {
        let maxDefer = definition.maxDefer.microseconds
        let hold = FleetHold(
            key: run.key, mode: definition.fleet, slot: run.scheduledRealtime,
            unavailable: definition.fleetUnavailable,
            giveUpAt: maxDefer > 0 ? (run.started?.monotonic ?? clock.now().monotonic) &+ maxDefer : nil)
        fleetRuns[run.id] = hold
        ask(run.id, hold, fleet)
    }

    /// Sends the claim of a run's slot (or place) to etcd; `claimDecided` hears the answer.
    private func ask(_ runID: String, _ hold: FleetHold, _ fleet: any FleetPort) {
        let decided: @Sendable (FleetClaim) -> Void = { [weak self] claim in
            self?.onLoop { $0.claimDecided(runID, claim) }
        }
        switch hold.mode {
        case .once: fleet.claimSlot(task: hold.key.description, slot: hold.slot, runID: runID, completion: decided)
        case .max(let limit): fleet.acquire(task: hold.key.description, limit: limit, runID: runID, completion: decided)
        case .host: break
        }
    }

    /// etcd answered the claim of a run: its handler starts, or the run ends here.
    func claimDecided(_ runID: String, _ claim: FleetClaim) {
        guard var hold = fleetRuns[runID], hold.pending, let fleet else { return }
        let now = clock.now()
        guard let run = scheduler.runs[runID], case .running = run.phase else {
            // Cancelled while the claim was pending (it keeps its reason): the claim goes back.
            if case .won(let token) = claim { give(hold, runID: runID, token: token, ran: false) }
            fleetRuns[runID] = nil
            perform(scheduler.notRun(runID: runID, reason: Self.unclaimedEnd(hold), at: now))
            return
        }
        switch claim {
        case .won(let token):
            hold.pending = false
            hold.token = token
            fleetRuns[runID] = hold
            scheduler.claimed(runID: runID, host: fleet.host, token: token)
            startClaimed(runID, hold)
        case .lost(let host, let token):
            fleetRuns[runID] = nil
            perform(scheduler.notRun(runID: runID, reason: .elsewhere, host: host, token: token, at: now))
        case .unavailable(let why):
            let gaveUp = hold.giveUpAt.map { now.monotonic >= $0 } ?? false
            if hold.unavailable == .wait, !gaveUp {
                if hold.unreachable == nil {
                    let until = hold.giveUpAt.map { "until \(Timestamp.format(now.realtime(at: $0))) (MaxDeferSec=)" }
                    journalUnavailable(
                        run, why, "it waits for etcd, asking again every second, " + (until ?? "for ever"))
                }
                hold.unreachable = why
                hold.retryAt = min(now.monotonic &+ Self.claimRetry, hold.giveUpAt ?? .max)
                fleetRuns[runID] = hold
                armFleetTimer()
                return
            }
            switch hold.unavailable {
            case .local:
                journalUnavailable(run, why, "it runs here unclaimed (FleetUnavailable=local)")
                hold.pending = false
                fleetRuns[runID] = hold
                scheduler.claimed(runID: runID, host: fleet.host, token: nil)
                startClaimed(runID, hold)
            case .skip, .wait:
                journalUnavailable(
                    run, why,
                    gaveUp
                        ? "it gave up waiting for it (MaxDeferSec=) and does not run"
                        : "it does not run (FleetUnavailable=skip)")
                fleetRuns[runID] = nil
                perform(scheduler.notRun(runID: runID, reason: .fleetUnavailable, at: now))
            }
        }
    }

    /// How long a run that waits for etcd (`FleetUnavailable=wait`) waits before it asks again, µs.
    static let claimRetry: UInt64 = 1_000_000

    private func journalUnavailable(_ run: Run, _ why: String, _ what: String) {
        journal.daemon(
            .fleetUnavailable, 4,
            "\(run.key.identifier): run \(run.id.prefix(8)): could not be claimed in etcd (\(why)); \(what)",
            [("TASK", run.key.identifier), ("TASK_KIND", run.key.kind), ("TASK_RUN_ID", run.id)])
    }

    /// Arms the timer of the next claim asked again (`FleetUnavailable=wait`), or disarms it.
    private func armFleetTimer() {
        let next = fleetRuns.values.lazy.compactMap(\.retryAt).min()
        if fleetTimer == nil, next != nil {
            fleetTimer = clock.makeTimer { [weak self] in self?.onLoop { $0.askAgain(all: false) } }
        }
        fleetTimer?.arm(at: next)
    }

    /// Asks etcd again for the claims of the runs that wait for it (`all`: every one, as etcd
    /// answers again; else those whose time came); a run whose `MaxDeferSec=` passed gives up.
    func askAgain(all: Bool) {
        guard let fleet else { return }
        let now = clock.now().monotonic
        let due = fleetRuns.filter { $0.value.retryAt.map { all || $0 <= now } ?? false }
        for (runID, var hold) in due {
            hold.retryAt = nil
            fleetRuns[runID] = hold
            if !(hold.giveUpAt.map { now >= $0 } ?? false) {
                ask(runID, hold, fleet)
            } else {
                claimDecided(runID, .unavailable(hold.unreachable ?? "no fleet"))
            }
        }
        armFleetTimer()
    }

    /// A run cancelled while it waits to ask etcd again (`FleetUnavailable=wait`, no request on its
    /// way) ends now, keeping its reason; the actions of its end.
    func cancelWaitingClaim(_ runID: String) -> [SchedulerAction] {
        guard let hold = fleetRuns[runID], hold.retryAt != nil else { return [] }
        fleetRuns[runID] = nil
        armFleetTimer()
        return scheduler.notRun(runID: runID, reason: Self.unclaimedEnd(hold), at: clock.now())
    }

    /// The reason a run cancelled before its claim was won ends with, if its cancellation was its
    /// budget's: for `Fleet=once`, `fleet-unavailable` (ended `cancelled`, never retried: a retry
    /// is not claimed, and the slot may run on another host); `max:N` keeps `budget` (its retry
    /// claims a place again). Any other cancellation keeps its own reason.
    static func unclaimedEnd(_ hold: FleetHold) -> CancelReason {
        hold.mode == .once ? .fleetUnavailable : .requested
    }

    /// The handler of a run whose claim was decided starts; its start is told now.
    private func startClaimed(_ runID: String, _ hold: FleetHold) {
        guard let run = scheduler.runs[runID] else { return }
        var actions: [SchedulerAction] = []
        if hold.startEvent != nil { actions.append(.report(.started(run))) }
        if let failure = launchHandler(run) {
            actions += scheduler.handlerEnded(runID: runID, termination: failure, at: clock.now())
        }
        perform(actions)
    }

    /// A fleet run ended: its slot is done (or given back), its place freed.
    func fleetRunEnded(_ run: Run) {
        guard let hold = fleetRuns.removeValue(forKey: run.id), !hold.pending else { return }
        // A run whose fence was lost must not mark its slot done (another host may hold it now),
        // nor one that taskd's stop, restart, upgrade or the system's sleep cut short: the slot is
        // given back, for a host that lost it to take it over (or this one, resuming it).
        let ran = !(run.cancelReason.map { $0.keepsWakes || $0 == .fenceLost || $0 == .sleep } ?? false)
        give(hold, runID: run.id, token: hold.token, ran: ran)
    }

    private func give(_ hold: FleetHold, runID: String, token: UInt64?, ran: Bool) {
        switch hold.mode {
        case .once:
            guard let token else { return }  // unclaimed (FleetUnavailable=local)
            fleet?.finishSlot(task: hold.key.description, slot: hold.slot, token: token, runID: runID, ran: ran)
        case .max: fleet?.release(task: hold.key.description, runID: runID)
        case .host: break
        }
    }

    func fleetEvent(_ event: FleetEvent) {
        let now = clock.now()
        switch event {
        case .fenceLost(let runIDs, let why):
            journal.daemon(
                .fenceLost, 4, "fleet: this host's claims are lost: \(why); \(runIDs.count) run(s) cancelled",
                [("TASKD_FLEET_FENCE_LOST", String(runIDs.count))])
            var actions: [SchedulerAction] = []
            for id in runIDs {
                guard scheduler.runs[id] != nil,
                    let cancelled = try? scheduler.cancel(target: id, reason: .fenceLost, at: now)
                else { continue }
                actions += cancelled.actions
            }
            perform(actions)
        case .takeOver(let task, let slot):
            guard let key = scheduler.tasks.keys.first(where: { $0.description == task }) else { return }
            journal.daemon(
                .fleetTakeover, 5,
                "\(key.identifier): the slot of \(Timestamp.format(slot)) was left undone by its holder; taking it over",
                [("TASK", key.identifier), ("TASK_KIND", key.kind), ("TASK_SCHEDULED_USEC", String(slot))])
            perform(scheduler.takeOver(key, scheduled: slot, at: now))
        case .reachable(let up, let why):
            fleetUnreachable = up ? nil : why
            if up { askAgain(all: true) }
            journal.daemon(
                .fleetUnavailable, up ? 5 : 4,
                up ? "fleet: etcd answers again" : "fleet: etcd cannot be reached: \(why)",
                [("TASKD_FLEET_REACHABLE", up ? "1" : "0")])
        }
    }

    /// `taskctl why` of a fleet task: `reasons` (the scheduler's), with its run's pending claim in
    /// place of "running", and how the fleet shares the task now.
    func fleetWhy(_ key: TaskKey, _ reasons: [WhyReason], at now: ClockReading) -> [WhyReason] {
        guard let state = scheduler.tasks[key], state.definition.fleet != .host else { return reasons }
        let d = state.definition
        var reasons = reasons
        let mode = "Fleet=\(d.fleet)"
        if let id = state.currentRunID, let hold = fleetRuns[id], hold.pending,
            let i = reasons.firstIndex(where: { $0.code == .running })
        {
            let what: String
            switch hold.mode {
            case .max(let limit): what = "one of the task's \(limit) places in the fleet"
            default: what = "its slot of \(Timestamp.format(hold.slot))"
            }
            if let unreachable = hold.unreachable {
                let giveUp = hold.giveUpAt.map { "; gives up at \(Timestamp.format(now.realtime(at: $0)))" } ?? ""
                reasons[i] = WhyReason(
                    .fleetUnavailable,
                    "run \(id.prefix(8)) waits for etcd to claim \(what): \(unreachable) (FleetUnavailable=wait)\(giveUp)",
                    runID: id)
            } else {
                reasons[i] = WhyReason(.claimPending, "run \(id.prefix(8)) waits for etcd to grant \(what)", runID: id)
            }
        }
        let first =
            reasons.firstIndex { ![.stopping, .sleeping, .draining, .paused].contains($0.code) } ?? reasons.count
        guard let fleet else {
            reasons.insert(
                WhyReason(.fleet, "\(mode), but taskd has no FleetEndpoints=: it runs on this host as Fleet=host"),
                at: first)
            return reasons
        }
        if let down = fleetUnreachable {
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

    /// `Fleet`: the fleet as etcd has it now, listed off the loop; none without `FleetEndpoints=`.
    package func fleet(reply: @escaping @Sendable (Result<SchedulerInterface.Fleet.Reply, FleetFailure>) -> Void) {
        guard let fleet else { return reply(.success(.init(name: nil, host: nil, hosts: [], claims: []))) }
        fleet.snapshot { result in reply(result.mapError { FleetFailure(reason: $0.description) }) }
    }
}
