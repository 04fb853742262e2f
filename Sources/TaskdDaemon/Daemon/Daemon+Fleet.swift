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
        fleetRuns[run.id] = FleetHold(
            key: run.key, mode: definition.fleet, slot: run.scheduledRealtime,
            unavailable: definition.fleetUnavailable)
        let id = run.id
        let decided: @Sendable (FleetClaim) -> Void = { [weak self] claim in
            self?.onLoop { $0.claimDecided(id, claim) }
        }
        switch definition.fleet {
        case .once:
            fleet.claimSlot(task: run.key.description, slot: run.scheduledRealtime, runID: id, completion: decided)
        case .max(let limit): fleet.acquire(task: run.key.description, limit: limit, runID: id, completion: decided)
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
            perform(scheduler.notRun(runID: runID, reason: .requested, at: now))
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
            let local = hold.unavailable == .local
            journal.daemon(
                .fleetUnavailable, 4,
                "\(run.key.identifier): run \(runID.prefix(8)): could not be claimed in etcd (\(why)); "
                    + (local
                        ? "it runs here unclaimed (FleetUnavailable=local)"
                        : "it does not run (FleetUnavailable=skip)"),
                [("TASK", run.key.identifier), ("TASK_KIND", run.key.kind), ("TASK_RUN_ID", runID)])
            guard local else {
                fleetRuns[runID] = nil
                perform(scheduler.notRun(runID: runID, reason: .fleetUnavailable, at: now))
                return
            }
            hold.pending = false
            fleetRuns[runID] = hold
            scheduler.claimed(runID: runID, host: fleet.host, token: nil)
            startClaimed(runID, hold)
        }
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
            journal.daemon(
                .fleetUnavailable, up ? 5 : 4,
                up ? "fleet: etcd answers again" : "fleet: etcd cannot be reached: \(why)",
                [("TASKD_FLEET_REACHABLE", up ? "1" : "0")])
        }
    }

    /// `Fleet`: the fleet as etcd has it now, listed off the loop; none without `FleetEndpoints=`.
    package func fleet(reply: @escaping @Sendable (Result<SchedulerInterface.Fleet.Reply, FleetFailure>) -> Void) {
        guard let fleet else { return reply(.success(.init(name: nil, host: nil, hosts: [], claims: []))) }
        fleet.snapshot { result in reply(result.mapError { FleetFailure(reason: $0.description) }) }
    }
}
