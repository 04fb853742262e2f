import TaskScheduling
import TaskdConfig
import TaskdIO
import TaskdProtocol
import TaskdSystem

/// What clients ask of the daemon (the control service calls these on the event loop): access,
/// wakes, cancels, pauses, and what the tasks and runs are.
extension Daemon {
    // MARK: Access

    /// Throws `permissionDenied` unless the peer may use the socket (`AllowUsers=`, `AllowGroups=`).
    package func checkAccess(_ peer: PeerCredentials) throws {
        guard AccessList.allows(access, uid: peer.uid, gid: peer.gid, groups: peer.groups, owner: owner) else {
            throw DaemonError.permissionDenied("uid \(peer.uid) may not use taskd (AllowUsers=, AllowGroups=)")
        }
    }

    /// Throws `permissionDenied` unless the peer may wake or cancel every task of `keys` (`WakeUsers=`, `WakeGroups=`).
    func checkWake(_ peer: PeerCredentials, _ keys: [TaskKey]) throws {
        for key in keys {
            let rule = scheduler.tasks[key]?.definition.wakeAccess
            guard AccessList.allows(rule, uid: peer.uid, gid: peer.gid, groups: peer.groups, owner: owner) else {
                throw DaemonError.permissionDenied(
                    "uid \(peer.uid) may not wake or cancel \(key) (WakeUsers=, WakeGroups=)")
            }
        }
    }

    /// Throws `permissionDenied` unless the peer is root or taskd's own user (reload, drain).
    package func checkAdmin(_ peer: PeerCredentials) throws {
        guard peer.uid == 0 || peer.uid == owner else {
            throw DaemonError.permissionDenied(
                "uid \(peer.uid) may not reload or drain taskd: only root and taskd's own user may")
        }
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
        refreshSampled()
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
        var infos: [RunInfo] = []
        var live: Set<String> = []
        for id in runIDs {
            if let run = scheduler.runs[id] {
                infos.append(RunInfo(run, disposition: .started))
                live.insert(id)
            } else if let ended = history.ended(id) {
                infos.append(ended)
            } else {
                throw DaemonError.noSuchRun(id)
            }
        }
        if let watch { watchers.add(live, followRetries: followRetries, notify: watch) }
        return infos
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
        if let now = scheduler.runs[run.id] { return RunInfo(now, disposition: disposition) }
        if var ended = history.ended(run.id, of: run.key) {
            ended.disposition = disposition
            return ended
        }
        return RunInfo(run, disposition: disposition)
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
        if !byRunID { withdraw(Set(keys), reason: "cancelled by uid \(peer.uid)") }
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
        return (key, fleetWhy(key, scheduler.explain(key, at: now), at: now).map { ($0, MessageID.behind($0.code)) })
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

    func info(for key: TaskKey, now: ClockReading) -> TaskInfo {
        let state = scheduler.tasks[key]!
        let record = history.records[key] ?? TaskRecord()
        var info = TaskInfo(
            state, current: state.currentRunID.flatMap { scheduler.runs[$0] },
            instances: state.instances.compactMap { scheduler.runs[$0] },
            queued: state.queue.compactMap { scheduler.runs[$0] }, recent: Array(record.history.suffix(5).reversed()),
            last: record.lastResult, health: scheduler.health(of: key), now: now)
        info.show(record.checkpoint)
        if !fleetRuns.isEmpty, let id = state.currentRunID, let hold = fleetRuns[id], hold.pending {
            info.current?.waitingFor =
                hold.unreachable.map { "etcd, to claim its slot: \($0) (FleetUnavailable=wait)" }
                ?? "etcd, to claim its slot"
        }
        return info
    }
}
