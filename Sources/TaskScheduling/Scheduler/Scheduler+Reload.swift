/// A new configuration (`reload`), and the tasks added to it at run time (`taskctl submit`).
extension Scheduler {
    /// Applies a new configuration: added tasks are scheduled; removed tasks lose their runs
    /// (reason `removed`); a changed task's run is cancelled (reason `reconfigured`) and started
    /// again under the new definition with the same trigger; unchanged tasks are not touched.
    public mutating func reload(_ definitions: [TaskDefinition], maxConcurrentRuns: Int, at now: ClockReading)
        -> (diff: ReloadDiff, actions: [SchedulerAction])
    {
        var diff = ReloadDiff()
        var actions: [SchedulerAction] = []
        self.maxConcurrentRuns = max(1, maxConcurrentRuns)
        let incoming = Dictionary(definitions.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        for key in tasks.keys.sorted() where incoming[key] == nil {
            _ = clear(key, reason: .removed, at: now, actions: &actions)
            tasks[key] = nil
            health[key] = nil
            paused.remove(key)
            pauseEnds[key] = nil
            overdueAt[key] = nil
            diff.removed.append(key)
        }
        for key in incoming.keys.sorted() {
            let definition = incoming[key]!
            guard let old = tasks[key] else {
                var fresh = TaskState(definition: definition, daemonStart: startedAt)
                fresh.pendingStartup.removeAll { $0 < now.monotonic }
                fresh.rearmCalendar(after: now.realtime, now: now)
                tasks[key] = fresh
                drawRandomDelay(key)
                diff.added.append(key)
                continue
            }
            guard old.definition != definition else {
                diff.unchanged.append(key)
                continue
            }
            diff.changed.append(key)
            tasks[key] = old.reconfigured(definition, daemonStart: startedAt, now: now)
            drawRandomDelay(key)
            // translationTask: the session is invalidated; the work starts again under the new definition.
            for (i, currentID) in old.inProgress.enumerated() {
                guard let current = runs[currentID] else { continue }
                let records = current.records
                runs[currentID]!.records = []
                _ = detach(currentID, reason: .reconfigured, at: now, actions: &actions)
                let restart = TriggerRequest(
                    trigger: current.trigger, attempt: current.attempt, wakeID: current.wakeID,
                    payload: current.payload, records: records)
                // The current run's restart takes its place as if no other were in progress: it
                // neither joins, waits behind nor supersedes those beside it, restarted after it.
                let beside = i == 0 ? tasks[key]!.inProgress : []
                if i == 0 { tasks[key]!.inProgress = [] }
                _ = trigger(key, restart, at: now, actions: &actions)
                if i == 0 { tasks[key]!.inProgress += beside }
            }
        }
        for key in diff.added + diff.changed { armOverdue(key, at: now) }
        groups.sizes = Self.groupSizes(definitions)
        for name in groups.sizes.keys.sorted() { admitWaiting(in: name, at: now, actions: &actions) }
        actions += pump(at: now)
        return (diff, endBatch(actions))
    }

    /// Arms the calendar of task `key` for its next elapse after `realtime`, which may be before
    /// now: an elapse since then is due at once, a timer elapse late. A submitted task's time
    /// counts from its submission, not from when its file was on disk.
    public mutating func armCalendar(_ key: TaskKey, after realtime: UInt64, at now: ClockReading) {
        guard var state = tasks[key] else { return }
        state.rearmCalendar(after: realtime, now: now)
        tasks[key] = state
    }
}
