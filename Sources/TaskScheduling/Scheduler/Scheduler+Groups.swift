/// Concurrency groups (`ConcurrencyGroup=NAME[:SIZE]`): at most SIZE runs of the group's tasks run
/// at a time. A run takes a place as it passes its task's conditions, before it asks for a
/// `MaxConcurrentRuns=` slot; beyond the size it waits its turn in order, holding neither, and is
/// never cancelled or skipped for it. A place is given back as the run ends (or goes back to wait
/// for its conditions), to the first run in line.
extension Scheduler {
    /// The group sizes of `definitions` (the first task that names a group gives its size; the
    /// configuration refuses a task that gives another).
    static func groupSizes(_ definitions: some Sequence<TaskDefinition>) -> [String: Int] {
        var sizes: [String: Int] = [:]
        for d in definitions {
            if let group = d.concurrencyGroup, sizes[group.name] == nil { sizes[group.name] = group.size }
        }
        return sizes
    }

    /// Passes `run` through the gate of its task's group: true when it holds a place (or its task
    /// has no group); false when it waits its turn (stored and reported so).
    mutating func passGroupGate(
        _ run: inout Run, definition d: TaskDefinition, actions: inout [SchedulerAction]
    ) -> Bool {
        guard let name = d.concurrencyGroup?.name else { return true }
        if run.group == name, groups.holds(run.id, in: name) { return true }
        run.group = name
        if groups.isOpen(name) {
            groups.hold(run.id, in: name)
            return true
        }
        groups.enqueue(run.id, in: name)
        run.waitingForGroup = true
        runs[run.id] = run
        actions.append(.report(.waiting(run)))
        return false
    }

    /// `id` leaves its group (it ended, or waits for its conditions again); a place it gave back
    /// goes to the runs in line.
    mutating func leaveGroup(_ id: String, _ name: String, at now: ClockReading, actions: inout [SchedulerAction]) {
        guard groups.leave(id, from: name) else { return }
        admitWaiting(in: name, at: now, actions: &actions)
    }

    /// The runs in line for `name` take its free places, first come first; each then starts or
    /// waits for a slot as any run does.
    mutating func admitWaiting(in name: String, at now: ClockReading, actions: inout [SchedulerAction]) {
        guard !isStopping else { return }
        while let id = groups.admitNext(in: name) {
            runs[id]?.waitingForGroup = false
            admit(id, at: now, actions: &actions)
        }
    }
}
