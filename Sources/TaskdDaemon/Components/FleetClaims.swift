import TaskScheduling
import TaskdConfig
import TaskdControl
import TaskdFleet
import TaskdProtocol

/// Runs of fleet tasks. The scheduler starts them as any other; before the handler starts, this
/// component claims the run's slot in etcd (`Fleet=once`: a calendar slot, by its nominal time) or
/// one of the task's places (`Fleet=max:N`), for the runs `FleetPolicy.claims` names. Won: the
/// handler starts, with the claim's fence token. Lost: the run ends `cancelled`, reason
/// `elsewhere`, naming the host that holds the slot. etcd unreachable: `FleetPolicy.unreachable`
/// decides. A claim whose lease this host could not renew in time cancels its run (`fence-lost`);
/// a slot lost to a host whose claim lapsed before the slot was done is taken over (`takeover`).
package final class FleetClaims: DaemonComponent {
    /// Makes the fleet at the daemon's start (nil: no `FleetEndpoints=`; every task runs as `Fleet=host`).
    private let make: (@Sendable (@escaping @Sendable (FleetEvent) -> Void) -> any FleetPort)?
    private(set) var fleet: (any FleetPort)?
    /// The fleet runs between their start and their end, by run id.
    private(set) var holds: [String: FleetHold] = [:]
    /// The timer of the claims asked again (`FleetUnavailable=wait`); why etcd is unreachable, if it is.
    private var timer: (any DaemonTimer)?
    private(set) var unreachable: String?

    package init(config: LoadedConfig, ports: DaemonPorts) { make = ports.fleet }

    package static var methods: [MethodRow<Daemon>] {
        [
            MethodRow(SchedulerInterface.Fleet.self) { _, call, daemon in
                daemon.component(FleetClaims.self).snapshot { result in
                    switch result {
                    case .success(let reply): call.reply(reply)
                    case .failure(let failure):
                        call.fail(
                            VarlinkError(SchedulerInterface.fleetUnavailable, ["reason": .string(failure.reason)]))
                    }
                }
            }
        ]
    }

    /// Makes the fleet, whose events come back on the loop.
    package func start(in daemon: isolated Daemon) {
        fleet = make? { [weak daemon] event in
            daemon?.onLoop { $0.component(FleetClaims.self).fleetEvent(event, in: $0) }
        }
    }

    package func takeStart(of run: Run, in daemon: isolated Daemon) -> Bool {
        guard let fleet, let definition = daemon.scheduler.tasks[run.key]?.definition,
            FleetPolicy.claims(run, definition)
        else { return false }
        let maxDefer = definition.maxDefer.microseconds
        let hold = FleetHold(
            key: run.key, mode: definition.fleet, slot: run.scheduledRealtime,
            unavailable: definition.fleetUnavailable,
            giveUpAt: maxDefer > 0 ? (run.started?.monotonic ?? daemon.clock.now().monotonic) &+ maxDefer : nil)
        holds[run.id] = hold
        ask(run.id, hold, fleet, in: daemon)
        return true
    }

    /// No handler yet, its claim pending: it ends once etcd answers (`claimDecided`), or now if it
    /// only waits to ask again.
    package func takeSignal(of run: Run, hard: Bool, in daemon: isolated Daemon) -> [SchedulerAction]? {
        guard !holds.isEmpty, let hold = holds[run.id], hold.pending else { return nil }
        guard hold.retryAt != nil else { return [] }
        holds[run.id] = nil
        armTimer(in: daemon)
        return daemon.scheduler.notRun(
            runID: run.id, reason: FleetPolicy.unclaimedEnd(hold.mode), at: daemon.clock.now())
    }

    /// A run's start is told once its claim is won; a fleet run that ended gives its claim back.
    package func observe(_ event: SchedulerEvent, in daemon: isolated Daemon) -> Bool {
        guard !holds.isEmpty else { return true }
        switch event {
        case .started(let run) where holds[run.id]?.pending == true:
            holds[run.id]?.startEvent = event
            return false
        case .ended(let run):
            guard let hold = holds.removeValue(forKey: run.id), !hold.pending else { return true }
            give(hold, runID: run.id, token: hold.token, ran: FleetPolicy.ranSlot(run))
            return true
        default: return true
        }
    }

    /// Sends the claim of a run's slot (or place) to etcd; `claimDecided` hears the answer.
    private func ask(_ runID: String, _ hold: FleetHold, _ fleet: any FleetPort, in daemon: isolated Daemon) {
        let decided: @Sendable (FleetClaim) -> Void = { [weak daemon] claim in
            daemon?.onLoop { $0.component(FleetClaims.self).claimDecided(runID, claim, in: $0) }
        }
        switch hold.mode {
        case .once: fleet.claimSlot(task: hold.key.description, slot: hold.slot, runID: runID, completion: decided)
        case .max(let limit): fleet.acquire(task: hold.key.description, limit: limit, runID: runID, completion: decided)
        case .host: break
        }
    }

    /// etcd answered the claim of a run: its handler starts, or the run ends here.
    func claimDecided(_ runID: String, _ claim: FleetClaim, in daemon: isolated Daemon) {
        guard var hold = holds[runID], hold.pending, let fleet else { return }
        let now = daemon.clock.now()
        guard let run = daemon.scheduler.runs[runID], case .running = run.phase else {
            // Cancelled while the claim was pending (it keeps its reason): the claim goes back.
            if case .won(let token) = claim { give(hold, runID: runID, token: token, ran: false) }
            holds[runID] = nil
            daemon.perform(
                daemon.scheduler.notRun(runID: runID, reason: FleetPolicy.unclaimedEnd(hold.mode), at: now))
            return
        }
        switch claim {
        case .won(let token):
            hold.pending = false
            hold.token = token
            holds[runID] = hold
            daemon.scheduler.claimed(runID: runID, host: fleet.host, token: token)
            startClaimed(runID, hold, in: daemon)
        case .lost(let host, let token):
            holds[runID] = nil
            daemon.perform(daemon.scheduler.notRun(runID: runID, reason: .elsewhere, host: host, token: token, at: now))
        case .unavailable(let why):
            switch FleetPolicy.unreachable(hold.unavailable, giveUpAt: hold.giveUpAt, at: now.monotonic) {
            case .askAgain(let at):
                if hold.unreachable == nil {
                    let until = hold.giveUpAt.map { "until \(Timestamp.format(now.realtime(at: $0))) (MaxDeferSec=)" }
                    journalUnavailable(
                        run, why, "it waits for etcd, asking again every second, " + (until ?? "for ever"), daemon)
                }
                hold.unreachable = why
                hold.retryAt = at
                holds[runID] = hold
                armTimer(in: daemon)
            case .runHere:
                journalUnavailable(run, why, "it runs here unclaimed (FleetUnavailable=local)", daemon)
                hold.pending = false
                holds[runID] = hold
                daemon.scheduler.claimed(runID: runID, host: fleet.host, token: nil)
                startClaimed(runID, hold, in: daemon)
            case .skip(let gaveUp):
                journalUnavailable(
                    run, why,
                    gaveUp
                        ? "it gave up waiting for it (MaxDeferSec=) and does not run"
                        : "it does not run (FleetUnavailable=skip)", daemon)
                holds[runID] = nil
                daemon.perform(daemon.scheduler.notRun(runID: runID, reason: .fleetUnavailable, at: now))
            }
        }
    }

    private func journalUnavailable(_ run: Run, _ why: String, _ what: String, _ daemon: isolated Daemon) {
        daemon.journal.daemon(
            .fleetUnavailable, 4,
            "\(run.key.identifier): run \(run.id.prefix(8)): could not be claimed in etcd (\(why)); \(what)",
            [("TASK", run.key.identifier), ("TASK_KIND", run.key.kind), ("TASK_RUN_ID", run.id)])
    }

    /// Arms the timer of the next claim asked again (`FleetUnavailable=wait`), or disarms it.
    private func armTimer(in daemon: isolated Daemon) {
        let next = holds.values.lazy.compactMap(\.retryAt).min()
        if timer == nil, next != nil {
            timer = daemon.clock.makeTimer { [weak daemon] in
                daemon?.onLoop { $0.component(FleetClaims.self).askAgain(all: false, in: $0) }
            }
        }
        timer?.arm(at: next)
    }

    /// Asks etcd again for the claims of the runs that wait for it (`all`: every one, as etcd
    /// answers again; else those whose time came); a run whose `MaxDeferSec=` passed gives up.
    func askAgain(all: Bool, in daemon: isolated Daemon) {
        guard let fleet else { return }
        let now = daemon.clock.now().monotonic
        let due = holds.filter { $0.value.retryAt.map { all || $0 <= now } ?? false }
        for (runID, var hold) in due {
            hold.retryAt = nil
            holds[runID] = hold
            if !(hold.giveUpAt.map { now >= $0 } ?? false) {
                ask(runID, hold, fleet, in: daemon)
            } else {
                claimDecided(runID, .unavailable(hold.unreachable ?? "no fleet"), in: daemon)
            }
        }
        armTimer(in: daemon)
    }

    /// The handler of a run whose claim was decided starts; its start is told now.
    private func startClaimed(_ runID: String, _ hold: FleetHold, in daemon: isolated Daemon) {
        guard let run = daemon.scheduler.runs[runID] else { return }
        var actions: [SchedulerAction] = []
        if hold.startEvent != nil { actions.append(.report(.started(run))) }
        if let failure = daemon.launchHandler(run) {
            actions += daemon.scheduler.handlerEnded(runID: runID, termination: failure, at: daemon.clock.now())
        }
        daemon.perform(actions)
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

    func fleetEvent(_ event: FleetEvent, in daemon: isolated Daemon) {
        let now = daemon.clock.now()
        switch event {
        case .fenceLost(let runIDs, let why):
            daemon.journal.daemon(
                .fenceLost, 4, "fleet: this host's claims are lost: \(why); \(runIDs.count) run(s) cancelled",
                [("TASKD_FLEET_FENCE_LOST", String(runIDs.count))])
            daemon.cancelRuns(runIDs, reason: .fenceLost)
        case .takeOver(let task, let slot):
            guard let key = daemon.scheduler.tasks.keys.first(where: { $0.description == task }) else { return }
            daemon.journal.daemon(
                .fleetTakeover, 5,
                "\(key.identifier): the slot of \(Timestamp.format(slot)) was left undone by its holder; taking it over",
                [("TASK", key.identifier), ("TASK_KIND", key.kind), ("TASK_SCHEDULED_USEC", String(slot))])
            daemon.perform(daemon.scheduler.takeOver(key, scheduled: slot, at: now))
        case .reachable(let up, let why):
            unreachable = up ? nil : why
            if up { askAgain(all: true, in: daemon) }
            daemon.journal.daemon(
                .fleetUnavailable, up ? 5 : 4,
                up ? "fleet: etcd answers again" : "fleet: etcd cannot be reached: \(why)",
                [("TASKD_FLEET_REACHABLE", up ? "1" : "0")])
        }
    }

    /// The run's claim, while pending: what `status` says it waits for.
    package func describe(_ info: inout TaskInfo, of state: TaskState, in daemon: isolated Daemon) {
        guard !holds.isEmpty, let id = state.currentRunID, let hold = holds[id], hold.pending else { return }
        info.current?.waitingFor =
            hold.unreachable.map { "etcd, to claim its slot: \($0) (FleetUnavailable=wait)" }
            ?? "etcd, to claim its slot"
    }

    /// `Fleet`: the fleet as etcd has it now, listed off the loop; none without `FleetEndpoints=`.
    func snapshot(reply: @escaping @Sendable (Result<SchedulerInterface.Fleet.Reply, FleetFailure>) -> Void) {
        guard let fleet else { return reply(.success(.init(name: nil, host: nil, hosts: [], claims: []))) }
        fleet.snapshot { result in reply(result.mapError { FleetFailure(reason: $0.description) }) }
    }
}

/// A run of a fleet task (`Fleet=once`, `Fleet=max:N`) between its start and its end: its claim,
/// pending until etcd answers, and the start event the journal hears only once the claim is won.
struct FleetHold {
    var key: TaskKey
    var mode: FleetMode
    /// `Fleet=once`: the slot's nominal time, CLOCK_REALTIME µs.
    var slot: UInt64
    var unavailable: FleetUnavailablePolicy
    /// True until the claim is decided: won, lost, or given up.
    var pending = true
    /// The claim's fence token, once won (nil: run unclaimed, `FleetUnavailable=local`).
    var token: UInt64?
    /// The run's `started` event, held back while the claim is pending.
    var startEvent: SchedulerEvent?
    /// `FleetUnavailable=wait`, etcd unreachable: why, when the claim is asked again and when the
    /// run gives up (`MaxDeferSec=` after its start; nil: never), CLOCK_MONOTONIC µs. No request
    /// is on its way while `retryAt` is set.
    var unreachable: String?
    var retryAt: UInt64?
    var giveUpAt: UInt64?
}
