import Dispatch

/// `Fleet=max:N`: at most N hosts run the task at a time (etcd's semaphore recipe). Each run puts
/// `/taskd/NAME/claims/max/TASK/HOST,RUN` on this host's lease; the N oldest keys (by create revision)
/// hold the semaphore, the others wait their turn: looked at again when the watch (`+Watch`) sees a
/// key of the task deleted, or every `pollMS` while no watch is up.
extension FleetClient {
    /// Takes one of the task's `limit` places for run `runID`; the completion comes when it holds
    /// one (`won`, the key's revision as token) or etcd cannot be reached (`unavailable`).
    public func acquire(task: String, limit: Int, runID: String, completion: @escaping @Sendable (FleetClaim) -> Void) {
        let key = "\(base)/claims/max/\(task)/\(host),\(runID)"
        work.async { [self] in
            do throws(FleetError) {
                let lease = try patiently { () throws(FleetError) in
                    let lease = try self.lease()
                    do throws(FleetError) {
                        _ = try etcd.call(.put(key, host, lease: lease))
                    } catch {
                        if error.leaseGone { lose(lease, why: error.description) }
                        throw error
                    }
                    return lease
                }
                let poll = state.withLock { s -> Bool in
                    s.holders[runID] = lease
                    s.waiting[runID] = Waiter(task: task, limit: limit, key: key, completion: completion)
                    defer { if !s.watchUp { s.polling = true } }
                    return !s.watchUp && !s.polling
                }
                checkWaiting(task)
                if poll { schedulePoll() }
            } catch {
                completion(.unavailable(error.description))
            }
        }
    }

    /// The run is over (or cancelled while it waited): its place goes to the next in line.
    public func release(task: String, runID: String) {
        let key = "\(base)/claims/max/\(task)/\(host),\(runID)"
        state.withLock {
            $0.holders[runID] = nil
            $0.waiting[runID] = nil
        }
        cleanup.async { [etcd] in _ = try? etcd.call(.delete(key)) }
    }

    /// Grants the waiters (of `only` that task, or of every task) whose keys are now among their
    /// task's oldest; false if etcd did not answer for one of the tasks.
    @discardableResult
    func checkWaiting(_ only: String? = nil) -> Bool {
        let waiting = state.withLock { $0.waiting }.filter { only == nil || $0.value.task == only }
        var answered = true
        for task in Set(waiting.values.map(\.task)) {
            guard let keys = try? etcd.list(prefix: "\(base)/claims/max/\(task)/") else {
                answered = false
                continue
            }
            for (runID, waiter) in waiting where waiter.task == task {
                guard let place = keys.firstIndex(where: { $0.key == waiter.key }), place < waiter.limit else {
                    continue
                }
                let granted = state.withLock { $0.waiting.removeValue(forKey: runID) != nil }
                if granted { waiter.completion(.won(token: keys[place].createRevision)) }
            }
        }
        return answered
    }
}
