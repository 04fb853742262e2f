/// `After=`: the runs one trigger starts (a wake of several tasks, the timers due at one moment) go
/// in the order their tasks' `After=` gives. A run whose task is after another's waits, holding no
/// slot, until that run ends (whatever its outcome: order, not requirement), then starts or waits
/// for a slot as any run does. A trigger of the task alone waits for nothing.
extension Scheduler {
    /// Triggers each of `requests` in `After=` order, each run after the runs the same trigger
    /// started for the tasks its task names; the result of each task's trigger.
    mutating func trigger(
        _ requests: [(TaskKey, TriggerRequest)], at now: ClockReading, actions: inout [SchedulerAction]
    ) -> [TaskKey: WakeResult] {
        var results: [TaskKey: WakeResult] = [:]
        for (key, request) in ordered(requests) {
            var request = request
            request.after = predecessors(of: key).compactMap { results[$0]?.run.id }
            if let result = trigger(key, request, at: now, actions: &actions) { results[key] = result }
        }
        return results
    }

    /// `requests` with each task after those of them its `After=` names; otherwise as given.
    func ordered(_ requests: [(TaskKey, TriggerRequest)]) -> [(TaskKey, TriggerRequest)] {
        guard requests.count > 1, requests.contains(where: { tasks[$0.0]?.definition.after.isEmpty == false }) else {
            return requests
        }
        let among = Set(requests.map(\.0))
        var placed: Set<TaskKey> = []
        var left = requests
        var order: [(TaskKey, TriggerRequest)] = []
        while !left.isEmpty {
            // The first whose predecessors among them are placed (the configuration refuses a
            // cycle; should one come anyway, the first left goes).
            let next =
                left.firstIndex { predecessors(of: $0.0).allSatisfy { !among.contains($0) || placed.contains($0) } }
                ?? 0
            placed.insert(left[next].0)
            order.append(left.remove(at: next))
        }
        return order
    }

    /// The tasks `key`'s `After=` names (targets, as a wake's; unknown ones name none).
    func predecessors(of key: TaskKey) -> [TaskKey] {
        guard let after = tasks[key]?.definition.after, !after.isEmpty else { return [] }
        return after.flatMap { (try? resolver.resolve($0)) ?? [] }.filter { $0 != key }
    }

    /// Parks `run` behind those of its `after` runs that have not ended: true if it waits (stored
    /// and reported so), false when none is left to wait for.
    mutating func waitBehind(_ run: inout Run, actions: inout [SchedulerAction]) -> Bool {
        run.after = run.after.filter { runs[$0] != nil }
        guard !run.after.isEmpty else { return false }
        for id in run.after { behind[id, default: []].append(run.id) }
        runs[run.id] = run
        actions.append(.report(.waiting(run)))
        return true
    }

    /// Run `id` ended: the runs that waited for it and for nothing else now are admitted.
    mutating func releaseBehind(_ id: String, at now: ClockReading, actions: inout [SchedulerAction]) {
        guard let waiting = behind.removeValue(forKey: id) else { return }
        for waiter in waiting {
            guard runs[waiter] != nil else { continue }
            runs[waiter]!.after.removeAll { $0 == id }
            if runs[waiter]!.after.isEmpty { admit(waiter, at: now, actions: &actions) }
        }
    }
}
