import TaskScheduling
import TaskdConfig
import TaskdIO
import TaskdProtocol
import TaskdSystem

/// What clients ask of the daemon (the control service calls these on the event loop): access,
/// wakes, cancels, pauses, and what the tasks and runs are.
extension Daemon {
    // MARK: Access (`AccessControl`)

    package func checkAccess(_ peer: PeerCredentials) throws { try component(AccessControl.self).checkAccess(peer) }
    package func checkAdmin(_ peer: PeerCredentials) throws { try AccessControl.checkAdmin(peer) }
    func checkWake(_ peer: PeerCredentials, _ keys: [TaskKey]) throws {
        try AccessControl.checkWake(peer, keys, scheduler.tasks)
    }

    // MARK: Wakes and cancels

    /// Wakes the target. `reply` gets the runs as they were once their handlers began, once the
    /// wake is in the state folder (one record per task; synced as `SyncIntervalSec=` says), so an
    /// acknowledged wake survives a crash; it is called on the state writer's thread, or on the
    /// loop's. With `watch`, every later state of those runs goes to `watch` on the loop, in order,
    /// the last one each run's end (told once the history recording it is on disk). The reply is
    /// built after the handlers begin, to not delay them.
    package func wake(
        target: String, id: String?, payload: String?, peer: PeerCredentials,
        watch: (@Sendable (RunInfo) -> Void)? = nil, followRetries: Bool = true,
        reply: @escaping @Sendable ([RunInfo]) -> Void
    ) throws {
        guard !scheduler.isStopping else { throw DaemonError.shuttingDown }
        let keys = try scheduler.resolver.resolve(target)
        try checkWake(peer, keys)
        metrics.countWake()
        component(MachineLink.self).refreshSampled(in: self)
        let now = clock.now()
        let wakes = keys.map {
            WakeRecord(
                id: HexID.make(recordRandom.next()), key: $0, wakeID: id, payload: payload,
                acknowledgedUSec: now.realtime)
        }
        let ticket = store.add(wakes)
        // One trigger for every task named: their runs go in `After=` order.
        var results: [WakeResult] = []
        var actions: [SchedulerAction] = []
        if wakes.count == 1 {
            let (result, more) = scheduler.wake(
                key: wakes[0].key, wakeID: id, payload: payload, record: wakes[0].id, at: now)
            results = result.map { [$0] } ?? []
            actions = more
        } else {
            (results, actions) = scheduler.wake(
                wakes.map { (key: $0.key, record: Optional($0.id)) }, wakeID: id, payload: payload, at: now)
        }
        if let watch {
            let followed = results.filter { !$0.disposition.isDropped }.map(\.run.id)
            watchers.add(Set(followed), followRetries: followRetries, notify: watch)
        }
        let rest = startRuns(in: actions)
        afterHandlersStart { [results] daemon in
            daemon.perform(rest)
            let runs = results.map { daemon.latest($0.run, disposition: $0.disposition) }
            daemon.store.whenDurable(ticket) { reply(runs) }
        }
    }

    /// `Follow`: the runs as they are now, in the order asked (`NoSuchRun` for an id unknown);
    /// with `watch`, every later state of those in progress goes to it, as for `wake`.
    package func follow(
        runIDs: [String], watch: (@Sendable (RunInfo) -> Void)?, followRetries: Bool
    ) throws -> [RunInfo] {
        try watchers.follow(runIDs, live: scheduler.runs, history: history, watch: watch, followRetries: followRetries)
    }

    /// Starts a run of `key` as `trigger` would, as attempt `attempt` (`TaskdTesting`'s `start`);
    /// the run, or nil if the task took no run.
    package func trigger(
        _ key: TaskKey, _ trigger: Trigger, attempt: Int, wakeID: String?, payload: String?
    ) -> Run? {
        let (result, actions) = scheduler.trigger(
            key, trigger, attempt: attempt, wakeID: wakeID, payload: payload, at: clock.now())
        perform(actions)
        return result?.run
    }

    /// The run as it is now: in progress, or as the history recorded its end.
    func latest(_ run: Run, disposition: WakeDisposition) -> RunInfo {
        history.latest(run, live: scheduler.runs[run.id], disposition: disposition)
    }

    /// Cancels a run by id, or every run, queued run and retry of the tasks the target names.
    package func cancel(target: String, peer: PeerCredentials) throws -> [RunInfo] {
        let byRunID = scheduler.runs[target] != nil
        let keys = try scheduler.runs[target].map { [$0.key] } ?? scheduler.resolver.resolve(target)
        try checkWake(peer, keys)
        let (runs, actions) = try scheduler.cancel(target: target, reason: .requested, at: clock.now())
        perform(actions)
        // A submitted task the target names is withdrawn: it does not run again. A run named by its
        // id is only that run (a spent task goes once it ends, as any).
        if !byRunID {
            component(Submissions.self).withdraw(Set(keys), reason: "cancelled by uid \(peer.uid)", in: self)
        }
        return runs.map { run in scheduler.runs[run.id].map { RunInfo($0) } ?? latest(run, disposition: .started) }
    }

    /// Pauses every task the target names (`taskctl pause`); returns them as kind:identifier.
    package func pause(target: String, until: UInt64?, note: String, peer: PeerCredentials) throws -> [String] {
        try checkWake(peer, scheduler.resolver.resolve(target))
        let (keys, actions) = try scheduler.pause(target: target, until: until, note: note, at: clock.now())
        perform(actions)
        return keys.map(\.description)
    }

    /// Resumes every paused task the target names (`taskctl resume`).
    package func resume(target: String, peer: PeerCredentials) throws -> [String] {
        try checkWake(peer, scheduler.resolver.resolve(target))
        let (keys, actions) = try scheduler.resume(target: target, at: clock.now())
        perform(actions)
        return keys.map(\.description)
    }

    // MARK: What the tasks are

    /// What decides, now, whether the task runs (`taskctl why`), each reason with the MESSAGE_ID
    /// of the journal entries behind it.
    package func why(name: String) throws -> (TaskKey, [(WhyReason, MessageID?)]) {
        let key = try scheduler.resolver.resolveOne(name)
        let now = clock.now()
        var reasons = scheduler.explain(key, at: now)
        for component in components { reasons = component.why(key, reasons, at: now, in: self) }
        return (key, reasons.map { ($0, MessageID.behind($0.code)) })
    }

    /// The metrics, in the OpenMetrics text format (or the Prometheus one, for `MetricsFile=`).
    package func metrics(prometheus: Bool = false) -> [UInt8] {
        MetricsReport.render(scheduler, counters: metrics.counters, now: clock.now(), prometheus: prometheus)
    }

    package func list() -> [TaskInfo] {
        let now = clock.now()
        return scheduler.tasks.keys.sorted().map { info(for: $0, now: now) }
    }

    package func status(name: String) throws -> TaskInfo {
        let key = try scheduler.resolver.resolveOne(name)
        return info(for: key, now: clock.now())
    }

    /// The task's last `limit` runs, the last to end first.
    package func history(name: String, limit: Int) throws -> [RunInfo] {
        let key = try scheduler.resolver.resolveOne(name)
        return Array((history.records[key]?.history ?? []).suffix(limit).reversed())
    }

    /// The task as `list` and `status` show it, with what its components add.
    func info(for key: TaskKey, now: ClockReading) -> TaskInfo {
        var info = scheduler.info(for: key, record: history.records[key], now: now)
        for component in components { component.describe(&info, of: scheduler.tasks[key]!, in: self) }
        return info
    }
}
