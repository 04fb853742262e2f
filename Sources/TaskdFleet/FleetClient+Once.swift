import Dispatch

/// `Fleet=once`: one host runs each slot. Keys, under `/taskd/NAME/`:
///   `claims/once/TASK/SLOT`  the claim: the holder's name, on its lease (its create revision is the token);
///   `done/TASK/SLOT`         `HOST,TOKEN` once the slot ran: it is not claimed again (kept `retention`).
/// SLOT is the slot's nominal time in µs, 20 digits, so that etcd's byte order is the numbers'.
extension FleetClient {
    /// How long a done slot is remembered, µs: a host whose timer fires that late runs it again.
    static let retention: UInt64 = 3600 * 1_000_000

    /// Claims slot `slot` of `task` for run `runID`: won only if no host holds the slot and it was
    /// not done. A slot lost to a host that holds it is watched, and offered back
    /// (`FleetEvent.takeOver`) if that host's claim goes before the slot is done.
    public func claimSlot(
        task: String, slot: UInt64, runID: String, completion: @escaping @Sendable (FleetClaim) -> Void
    ) {
        work.async { [self] in completion(claimNow(task: task, slot: slot, runID: runID)) }
    }

    private func claimNow(task: String, slot: UInt64, runID: String) -> FleetClaim {
        let (slotKey, doneKey) = keys(task, slot)
        do throws(FleetError) {
            let (lease, answer) = try patiently { () throws(FleetError) in
                let lease = try self.lease()
                var txn = EtcdTransaction()
                txn.created(slotKey, at: 0)
                txn.created(doneKey, at: 0)
                txn.success = [.put(slotKey, host, lease: lease)]
                txn.failure = [.get(slotKey), .get(doneKey)]
                do throws(FleetError) {
                    return (lease, try etcd.transaction(txn))
                } catch {
                    // The session lease expired in etcd: the next try grants a new one.
                    if error.leaseGone { lose(lease, why: error.description) }
                    throw error
                }
            }
            if answer.succeeded {
                let kept = state.withLock { s in
                    if s.lease == lease { s.holders[runID] = lease }
                    return s.lease == lease
                }
                // The lease was lost while the claim was made: the claim goes with it.
                return kept ? .won(token: answer.revision) : .unavailable("this host's lease was lost")
            }
            if let holder = answer.found(0).first, holder.lease == lease, holder.value == host {
                // This very claim, made by a try whose answer was lost (`EtcdRPC.call`).
                state.withLock { $0.holders[runID] = lease }
                return .won(token: holder.createRevision)
            }
            if let holder = answer.found(0).first {
                watch(task, slot, lostAt: answer.revision)
                return .lost(host: holder.value, token: holder.createRevision)
            }
            let done = answer.found(1).first?.value.split(separator: ",") ?? []
            return .lost(host: done.first.map(String.init) ?? "?", token: done.count > 1 ? UInt64(done[1]) ?? 0 : 0)
        } catch {
            return .unavailable(error.description)
        }
    }

    /// The run of a slot this host claimed ended. `ran`: its handler ran (whatever the outcome),
    /// so the slot is done; else (cancelled before it started, its fence lost) the claim is only
    /// given back, for another host to take over. A claim superseded since (`token` no longer the
    /// slot's) changes nothing. Done slots older than `retention` are forgotten.
    public func finishSlot(task: String, slot: UInt64, token: UInt64, runID: String, ran: Bool) {
        state.withLock { _ = $0.holders.removeValue(forKey: runID) }
        let (slotKey, doneKey) = keys(task, slot)
        let forgotten = keys(task, slot > Self.retention ? slot - Self.retention : 0).done
        let oldest = keys(task, 0).done
        cleanup.async { [self] in
            var txn = EtcdTransaction()
            txn.created(slotKey, at: token)
            txn.success = [.delete(slotKey)]
            if ran { txn.success += [.put(doneKey, "\(host),\(token)"), .delete(oldest, end: forgotten)] }
            _ = try? etcd.transaction(txn)
        }
    }

    /// Watches a slot lost to another host (the claim's answer was at revision `lostAt`) until it
    /// is done, or offered back: the watch (`+Watch`) sees its claim deleted; while none is up,
    /// a poll looks. A deletion the watch saw before the slot was added here is looked for once.
    private func watch(_ task: String, _ slot: UInt64, lostAt revision: UInt64) {
        let (poll, look) = state.withLock { s -> (Bool, Bool) in
            var slots = s.watched[task, default: []]
            slots.insert(slot)
            // A bounded watch: the oldest slots are let go first.
            while slots.count > 16, let oldest = slots.min() { slots.remove(oldest) }
            s.watched[task] = slots
            let poll = !s.watchUp && !s.polling
            if poll { s.polling = true }
            return (poll, s.watchUp && s.watchRevision >= Int64(clamping: revision))
        }
        if poll { schedulePoll() }
        if look { work.async { [self] in if !self.look(task, slot) { lookAgainSoon() } } }
    }

    func schedulePoll() {
        work.asyncAfter(deadline: .now() + .milliseconds(Self.pollMS)) { [self] in poll() }
    }

    /// Looks at every watched slot and `max:N` waiter once; again in `pollMS` while no watch is up.
    func poll() {
        // etcd does not answer: nothing can be learnt now, and claims go first.
        if backingOff() == nil { _ = lookAtAll() }
        let more = state.withLock { s -> Bool in
            s.watched = s.watched.filter { !$0.value.isEmpty }
            s.polling = !(s.watched.isEmpty && s.waiting.isEmpty) && !s.stopped && !s.watchUp
            return s.polling
        }
        if more { schedulePoll() }
    }

    /// Looks at every watched slot and `max:N` waiter once: false if etcd did not answer one.
    func lookAtAll() -> Bool {
        let watched = state.withLock { s in s.stopped ? [:] : s.watched }
        var answered = true
        for (task, slots) in watched {
            for slot in slots.sorted() where !look(task, slot) { answered = false }
        }
        return checkWaiting() && answered
    }

    /// A look the watch asked for found etcd not answering (a member lost, a leader elected): the
    /// deletion it saw is not seen again, so everything is looked at again 250 ms later, until etcd answers.
    func lookAgainSoon() {
        work.asyncAfter(deadline: .now() + .milliseconds(250)) { [self] in
            if !state.withLock({ $0.stopped }) && !lookAtAll() { lookAgainSoon() }
        }
    }

    /// Looks at a watched slot: let go if done, offered back (`takeOver`) if nobody holds it;
    /// false if etcd did not answer.
    @discardableResult
    func look(_ task: String, _ slot: UInt64) -> Bool {
        let (slotKey, doneKey) = keys(task, slot)
        var txn = EtcdTransaction()
        txn.success = [.get(slotKey), .get(doneKey)]
        guard let answer = try? etcd.transaction(txn) else { return false }
        let done = !answer.found(1).isEmpty
        let held = !answer.found(0).isEmpty
        guard done || !held else { return true }
        let watched = state.withLock { $0.watched[task]?.remove(slot) != nil }
        if watched && !done { events(.takeOver(task: task, slot: slot)) }
        return true
    }

    func keys(_ task: String, _ slot: UInt64) -> (slot: String, done: String) {
        let slotText = Self.padded(slot)
        return ("\(base)/claims/once/\(task)/\(slotText)", "\(base)/done/\(task)/\(slotText)")
    }
}
