import TaskScheduling
import TaskdProtocol

extension Scheduler {
    /// The task `key` as `list` and `status` show it: its state, runs, queue and health, with its
    /// record's last runs and checkpoint.
    func info(for key: TaskKey, record: TaskRecord?, now: ClockReading) -> TaskInfo {
        let state = tasks[key]!
        let record = record ?? TaskRecord()
        var info = TaskInfo(
            state, current: state.currentRunID.flatMap { runs[$0] }, instances: state.instances.compactMap { runs[$0] },
            queued: state.queue.compactMap { runs[$0] }, recent: Array(record.history.suffix(5).reversed()),
            last: record.lastResult, health: health(of: key), now: now)
        info.show(record.checkpoint)
        return info
    }
}

extension RunHistory {
    /// The run as it is now: `live` (in progress), or as the history recorded its end.
    func latest(_ run: Run, live: Run?, disposition: WakeDisposition) -> RunInfo {
        if let live { return RunInfo(live, disposition: disposition) }
        if var ended = ended(run.id, of: run.key) {
            ended.disposition = disposition
            return ended
        }
        return RunInfo(run, disposition: disposition)
    }
}

extension RunWatchers {
    /// `Follow`: the runs as they are now (`live`: in progress), in the order asked (`NoSuchRun`
    /// for an id unknown); with `watch`, every later state of those in progress goes to it.
    func follow(
        _ runIDs: [String], live: [String: Run], history: RunHistory, watch: (@Sendable (RunInfo) -> Void)?,
        followRetries: Bool
    ) throws -> [RunInfo] {
        var infos: [RunInfo] = []
        var followed: Set<String> = []
        for id in runIDs {
            if let run = live[id] {
                infos.append(RunInfo(run, disposition: .started))
                followed.insert(id)
            } else if let ended = history.ended(id) {
                infos.append(ended)
            } else {
                throw DaemonError.noSuchRun(id)
            }
        }
        if let watch { add(followed, followRetries: followRetries, notify: watch) }
        return infos
    }
}
