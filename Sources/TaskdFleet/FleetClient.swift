import Dispatch
import Synchronization
import TaskScheduling
import TaskdConfig
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// This host's membership of a fleet: one etcd lease (the session) that every claim of this host
/// hangs on, renewed every third of its time; the claims on runs' slots (`+Once`, `+Max`); and the
/// watchdog that declares the claims lost before the lease can have expired in etcd.
///
/// Every etcd call blocks a Dispatch queue or a thread of the client's, never the event loop or
/// the pool: `work` (claims, and the polls of slots lost to others while no watch is up),
/// `cleanup` (what may wait: claims given back, slots marked done), `renewal` (the lease),
/// `watchdog` (its deadline) and the watch's thread (`+Watch`: the claims' deletions, which
/// start takeovers and wake `max:N` waiters), so that a slow etcd delays neither the renewal nor
/// the deadline, and a claim waits for no cleanup. Completions and `events` are called on those.
public final class FleetClient: Sendable {
    public let host: String
    /// `FleetName=`.
    public let name: String
    let etcd: EtcdRPC
    /// For the renewals: shorter timeouts, so that a member that does not answer costs one retry,
    /// not the lease.
    private let quick: EtcdRPC
    /// `/taskd/NAME`: every key of the fleet is under it.
    let base: String
    /// The lease's time, seconds.
    let ttl: Int
    let events: @Sendable (FleetEvent) -> Void
    let work = DispatchQueue(label: "taskd.fleet.work")
    /// What may wait (a slot marked done, a claim given back, a lease revoked): never in front of a claim.
    let cleanup = DispatchQueue(label: "taskd.fleet.cleanup")
    private let renewal = DispatchQueue(label: "taskd.fleet.renewal")
    private let watchdogQueue = DispatchQueue(label: "taskd.fleet.watchdog")
    let state = Mutex(State())
    /// How often a slot lost to another host is looked at again, and a `max:N` run waiting for a
    /// place, ms, while no watch is up (with one, a deletion is seen as etcd makes it).
    static let pollMS = 2000

    struct State: ~Copyable {
        /// The session lease, and until when it is surely alive (monotonic µs): the time its last
        /// renewal was sent plus the TTL etcd answered.
        var lease: Int64?
        var validUntil: UInt64 = 0
        /// The runs that hold a claim, and the lease each claim hangs on.
        var holders: [String: Int64] = [:]
        /// Slots lost to another host, watched until done (or taken over): task → slots.
        var watched: [String: Set<UInt64>] = [:]
        var polling = false
        /// The watch of the claims' deletions is up (`+Watch`), and the last revision it saw.
        var watchUp = false
        var watchRevision: Int64 = 0
        /// Moved on when etcd is found unreachable: the watch's stream is made again.
        var watchGeneration = 0
        /// `Fleet=max:N` runs waiting their turn: run id → (task, limit, key, completion).
        var waiting: [String: Waiter] = [:]
        var reachable = true
        /// When etcd last failed a claim (boot-time µs): claims fail at once for `backoff` after.
        var failedAt: UInt64?
        var timersStarted = false
        /// A renewal that failed is to be tried again soon.
        var retrying = false
        var stopped = false
    }

    struct Waiter {
        var task: String
        var limit: Int
        var key: String
        var completion: @Sendable (FleetClaim) -> Void
    }

    /// The renewal and watchdog timers (Dispatch sources are thread-safe, not `Sendable`).
    private struct Timers: @unchecked Sendable { var sources: [any DispatchSourceTimer] = [] }
    private let timers = Mutex(Timers())

    public init(settings: FleetSettings, host: String, events: @escaping @Sendable (FleetEvent) -> Void) {
        self.host = host
        etcd = EtcdRPC(settings, timeoutMS: 1500, connectTimeoutMS: 500)
        quick = EtcdRPC(settings, timeoutMS: 1000, connectTimeoutMS: 500)
        name = settings.name
        base = "/taskd/" + settings.name
        ttl = max(2, Int(settings.lease.microseconds / 1_000_000))
        self.events = events
    }

    /// This host's name as `FleetHost=` gives it, else the host name.
    public static func hostName(_ settings: FleetSettings) -> String {
        if let host = settings.host { return host }
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The session lease, granted if there is none. On `work`.
    func lease() throws(FleetError) -> Int64 {
        if let lease = state.withLock({ $0.lease }) { return lease }
        let sent = Self.now()
        let id = try etcd.grant(seconds: ttl)
        state.withLock {
            $0.lease = id
            $0.validUntil = sent + UInt64(ttl) * 1_000_000
        }
        // Who is in the fleet, for `taskctl fleet`: a key of this host's on its lease.
        _ = try? etcd.call(.put("\(base)/hosts/\(host)", String(id, radix: 16), lease: id))
        startTimers()
        return id
    }

    /// The renewal, every third of the lease, the watchdog, every 100 ms, and the watch's thread.
    private func startTimers() {
        let start = state.withLock { s -> Bool in
            defer { s.timersStarted = true }
            return !s.timersStarted
        }
        guard start else { return }
        let renew = DispatchSource.makeTimerSource(queue: renewal)
        renew.schedule(deadline: .now(), repeating: .milliseconds(ttl * 1000 / 3), leeway: .milliseconds(50))
        renew.setEventHandler { [weak self] in self?.renew() }
        let watchdog = DispatchSource.makeTimerSource(queue: watchdogQueue)
        watchdog.schedule(deadline: .now(), repeating: .milliseconds(100), leeway: .milliseconds(20))
        watchdog.setEventHandler { [weak self] in self?.checkDeadline() }
        let started = Timers(sources: [renew, watchdog])
        timers.withLock { $0 = started }
        renew.resume()
        watchdog.resume()
        startWatch()
    }

    /// Renews the lease; a renewal that fails is tried again a quarter of a second later, until
    /// the lease is renewed or lost.
    private func renew() {
        guard let lease = state.withLock({ $0.stopped ? nil : $0.lease }) else { return }
        let sent = Self.now()
        do {
            let left = try quick.keepAlive(lease)
            state.withLock { s in
                if s.lease == lease { s.validUntil = max(s.validUntil, sent + UInt64(left) * 1_000_000) }
            }
            reachable(true, why: "the lease was renewed")
        } catch {
            if error.leaseGone {
                lose(lease, why: "etcd no longer knows this host's lease (it expired)")
            } else {
                reachable(false, why: error.description)
                let retry = state.withLock { s -> Bool in
                    defer { s.retrying = true }
                    return !s.retrying
                }
                guard retry else { return }
                renewal.asyncAfter(deadline: .now() + .milliseconds(250)) { [weak self] in
                    self?.state.withLock { $0.retrying = false }
                    self?.renew()
                }
            }
        }
    }

    /// The claims are lost a third of the lease before it can have expired, unrenewed: their runs
    /// are cancelled then, while no other host can have taken their slots yet.
    private func checkDeadline() {
        let margin = UInt64(ttl) * 1_000_000 / 3
        guard let (lease, validUntil) = state.withLock({ s in s.lease.map { ($0, s.validUntil) } }),
            Self.now() + margin >= validUntil
        else { return }
        lose(lease, why: "the lease was not renewed within \(ttl - ttl / 3) s of its \(ttl) s")
    }

    /// Drops `lease` (if still the session's): its claims' runs are told to stop; a new lease is
    /// granted at the next claim. The old one is revoked if etcd can be reached, so that its slots
    /// can be taken over before it would expire.
    func lose(_ lease: Int64, why: String) {
        let runs = state.withLock { s -> [String]? in
            guard s.lease == lease else { return nil }
            s.lease = nil
            let runs = s.holders.filter { $0.value == lease }.map(\.key).sorted()
            for id in runs { s.holders[id] = nil }
            return runs
        }
        guard let runs else { return }
        events(.fenceLost(runIDs: runs, why: why))
        cleanup.async { [etcd] in try? etcd.revoke(lease) }
    }

    func reachable(_ now: Bool, why: String) {
        let changed = state.withLock { s -> Bool in
            defer { s.reachable = now }
            if !now && s.reachable { s.watchGeneration += 1 }
            return s.reachable != now
        }
        if changed { events(.reachable(now, why: why)) }
    }

    /// How long claims fail at once after one spent its `patience` unanswered, µs: a claim takes
    /// each member's dial timeout when etcd is down, and slots would queue up behind it.
    static let backoff: UInt64 = 5_000_000
    /// How long a claim keeps asking etcd (every member in turn, 200 ms apart) before it fails,
    /// µs: a member lost or a leader elected costs a slot's claim a delay, not the slot.
    static let patience: UInt64 = 3_000_000

    /// Runs `body`, a claim's etcd calls, until etcd answers it (a refusal is an answer), for at
    /// most `patience`; then claims fail at once for `backoff`. On `work`.
    func patiently<T>(_ body: () throws(FleetError) -> T) throws(FleetError) -> T {
        if let why = backingOff() { throw FleetError(why) }
        let start = Self.now()
        while true {
            do {
                let value = try body()
                claimFailed(false)
                reachable(true, why: "a claim was answered")
                return value
            } catch {
                if error.refused { throw error }
                let stopped = state.withLock { $0.stopped }
                if !stopped, Self.now() - start + 200_000 < Self.patience {
                    usleep(200_000)
                    continue
                }
                claimFailed(true)
                reachable(false, why: error.description)
                throw error
            }
        }
    }

    /// Nil when a claim may go to etcd now; else why not (it failed less than `backoff` ago).
    func backingOff() -> String? {
        let now = Self.now()
        return state.withLock { s in
            guard let failed = s.failedAt, now < failed + Self.backoff else { return nil }
            return
                "etcd did not answer \((now - failed) / 1_000_000) s ago; tried again \(Self.backoff / 1_000_000) s after"
        }
    }

    /// A claim failed (`true`) or was answered: for `backingOff`.
    func claimFailed(_ failed: Bool) { state.withLock { $0.failedAt = failed ? Self.now() : nil } }

    /// A clean stop: the runs' ends are told first (slots done, claims given back), then the
    /// timers end and the lease is revoked, so that this host's claims go now. Blocks.
    public func stop() {
        cleanup.sync {}
        let lease = state.withLock { s -> Int64? in
            s.stopped = true
            defer { s.lease = nil }
            return s.lease
        }
        timers.withLock { timers in
            for t in timers.sources { t.cancel() }
            timers.sources = []
        }
        if let lease { work.sync { _ = try? etcd.revoke(lease) } }
    }

    /// The fleet as etcd has it now (`taskctl fleet`): the hosts that hold a lease, and the claims
    /// held, oldest first. On `cleanup`: a listing waits for no claim.
    public func snapshot(completion: @escaping @Sendable (Result<SchedulerInterface.Fleet.Reply, FleetError>) -> Void) {
        cleanup.async { [self] in
            do throws(FleetError) {
                let hosts = try etcd.list(prefix: base + "/hosts/").map { String($0.key.dropFirst(base.count + 7)) }
                let claims = try etcd.list(prefix: base + "/claims/").compactMap(claim)
                completion(.success(.init(name: name, host: host, hosts: hosts.sorted(), claims: claims)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// A claim's key as `taskctl fleet` shows it: `claims/once/TASK/SLOT` or `claims/max/TASK/HOST,RUN`.
    private func claim(_ kv: EtcdKeyValue) -> FleetClaimInfo? {
        let parts = kv.key.dropFirst(base.count + "/claims/".count).split(separator: "/")
        guard parts.count == 3 else { return nil }
        let mode = String(parts[0])
        let last = parts[2]
        return FleetClaimInfo(
            task: String(parts[1]), mode: mode, slotUSec: mode == "once" ? UInt64(last) : nil,
            runId: mode == "max" ? last.split(separator: ",").last.map(String.init) : nil, host: kv.value,
            fenceToken: kv.createRevision)
    }

    /// 20 digits: slots order as text as they do as numbers (etcd compares values as bytes).
    static func padded(_ value: UInt64) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_BOOTTIME, &t)  // counts system sleep, as the lease does
        return UInt64(t.tv_sec) * 1_000_000 + UInt64(t.tv_nsec) / 1000
    }
}

/// How a claim on a run's slot went (`FleetClient.claimSlot`, `FleetClient.acquire`).
public enum FleetClaim: Hashable, Sendable {
    /// This host holds it; the claim's fence token (the etcd revision that created the claim).
    case won(token: UInt64)
    /// Another host holds it or ran it: that host, and its claim's token.
    case lost(host: String, token: UInt64)
    /// etcd could not be reached, or refused; why.
    case unavailable(String)
}

/// What the fleet tells the daemon of its own accord (`FleetClient`'s `events`).
public enum FleetEvent: Sendable {
    /// This host's lease was not renewed in time: the claims on it are lost, and these runs,
    /// which held them, must stop (reason `fence-lost`).
    case fenceLost(runIDs: [String], why: String)
    /// A slot this host lost to another was left undone by its holder (its lease expired): it may
    /// run here now (trigger `takeover`). `slot` is the slot's nominal time, CLOCK_REALTIME µs.
    case takeOver(task: String, slot: UInt64)
    /// etcd became unreachable, or reachable again: for the journal.
    case reachable(Bool, why: String)
}
