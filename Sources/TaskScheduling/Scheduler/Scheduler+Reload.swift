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
            drop(key, at: now, actions: &actions)
            diff.removed.append(key)
        }
        for key in incoming.keys.sorted() { place(incoming[key]!, at: now, diff: &diff, actions: &actions) }
        for key in diff.added + diff.changed { armOverdue(key, at: now) }
        groups.sizes = Self.groupSizes(definitions)
        return (diff, settle(groups: groups.sizes.keys.sorted(), at: now, actions: actions))
    }

    /// Adds one task, or puts a new definition of a task in effect: what `reload` does when the
    /// configuration changes by this task alone (`diff` says added, changed or unchanged), with
    /// no work for the other tasks, which it leaves untouched.
    public mutating func add(_ definition: TaskDefinition, at now: ClockReading)
        -> (diff: ReloadDiff, actions: [SchedulerAction])
    {
        let key = definition.key
        let oldGroup = tasks.read(key) { $0.definition.concurrencyGroup?.name } ?? nil
        var diff = ReloadDiff()
        var actions: [SchedulerAction] = []
        place(definition, at: now, diff: &diff, actions: &actions)
        if diff.unchanged.isEmpty { armOverdue(key, at: now) }
        var named: [String] = []
        if let group = definition.concurrencyGroup {
            // The first task that names a group gives its size (the configuration refuses another);
            // a group with no size yet is named by no other task.
            let size = groups.sizes[group.name]
            if size == nil || (size != group.size && !othersName(group.name, besides: key)) {
                groups.sizes[group.name] = group.size
            }
            named.append(group.name)
        }
        if let oldGroup, oldGroup != definition.concurrencyGroup?.name {
            if !othersName(oldGroup, besides: key) { groups.sizes[oldGroup] = nil }
            named.append(oldGroup)
        }
        return (diff, settle(groups: named.sorted(), at: now, actions: actions))
    }

    /// Removes one task: what `reload` does for a configuration without it (its runs cancelled,
    /// reason `removed`; its health and pause forgotten), with no work for the other tasks.
    /// `diff.removed` is empty when there was no such task.
    public mutating func remove(_ key: TaskKey, at now: ClockReading) -> (diff: ReloadDiff, actions: [SchedulerAction])
    {
        var diff = ReloadDiff()
        var actions: [SchedulerAction] = []
        guard let group = tasks.read(key, { $0.definition.concurrencyGroup?.name }) else {
            return (diff, settle(groups: [], at: now, actions: actions))
        }
        drop(key, at: now, actions: &actions)
        diff.removed.append(key)
        if let group, !othersName(group, besides: key) { groups.sizes[group] = nil }
        return (diff, settle(groups: group.map { [$0] } ?? [], at: now, actions: actions))
    }

    /// Arms the calendar of task `key` for its next elapse after `realtime`, which may be before
    /// now: an elapse since then is due at once, a timer elapse late. A submitted task's time
    /// counts from its submission, not from when its file was on disk.
    public mutating func armCalendar(_ key: TaskKey, after realtime: UInt64, at now: ClockReading) {
        guard var state = tasks[key] else { return }
        state.rearmCalendar(after: realtime, now: now)
        tasks[key] = state
    }

    /// Forgets task `key`: its runs are cancelled (reason `removed`), its health and pause dropped.
    private mutating func drop(_ key: TaskKey, at now: ClockReading, actions: inout [SchedulerAction]) {
        _ = clear(key, reason: .removed, at: now, actions: &actions)
        tasks[key] = nil
        health[key] = nil
        paused.remove(key)
        pauseEnds[key] = nil
        overdueAt[key] = nil
    }

    /// Puts `definition` in effect and says how in `diff`: a new task is armed from now; a changed
    /// one is armed again and its runs in progress start again under it; an equal one is left alone.
    private mutating func place(
        _ definition: TaskDefinition, at now: ClockReading, diff: inout ReloadDiff, actions: inout [SchedulerAction]
    ) {
        let key = definition.key
        guard let old = tasks[key] else {
            var fresh = TaskState(definition: definition, daemonStart: startedAt)
            fresh.pendingStartup.removeAll { $0 < now.monotonic }
            fresh.rearmCalendar(after: now.realtime, now: now)
            tasks[key] = fresh
            drawRandomDelay(key)
            diff.added.append(key)
            return
        }
        guard old.definition != definition else {
            diff.unchanged.append(key)
            return
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

    /// Whether a task other than `key` names concurrency group `name`: a walk of the table, made
    /// only for a task that names a group.
    private func othersName(_ name: String, besides key: TaskKey) -> Bool {
        tasks.contains(inPlace: { $0.definition.concurrencyGroup?.name == name && $0.definition.key != key })
    }

    /// The end of every change of the table: the runs waiting in the groups `names` take the
    /// places free, and waiting runs start as slots allow.
    private mutating func settle(groups names: [String], at now: ClockReading, actions: consuming [SchedulerAction])
        -> [SchedulerAction]
    {
        for name in names where groups.sizes[name] != nil { admitWaiting(in: name, at: now, actions: &actions) }
        actions += pump(at: now)
        return endBatch(actions)
    }
}
