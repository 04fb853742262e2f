import TaskScheduling

/// A deterministic RandomNumberGenerator (SplitMix64) for reproducible run ids.
struct SeededRandom: RandomNumberGenerator, Sendable {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A clock the test moves by hand.
struct ManualClock {
    var now = ClockReading(monotonic: 5_000_000_000, realtime: 1_767_225_600_000_000)
    mutating func advance(seconds: Double) -> ClockReading {
        now = now.advanced(by: UInt64(seconds * 1_000_000))
        return now
    }
    func at(seconds: Double) -> ClockReading { now.advanced(by: UInt64(seconds * 1_000_000)) }
}

func commandTask(
    _ name: String, kind: String = "appRefresh", budget: UInt64 = 30, grace: UInt64 = 5,
    onStartup: [UInt64] = [], onUnitActive: [UInt64] = []
) -> TaskDefinition {
    TaskDefinition(
        key: TaskKey(kind: kind, identifier: name), budget: .seconds(budget), cancelGrace: .seconds(grace),
        onStartup: onStartup.map { .seconds($0) }, onUnitActive: onUnitActive.map { .seconds($0) },
        handler: .command(CommandSpec(argv: ["/bin/true"])))
}

func swiftTask(_ name: String, budget: UInt64 = 30, grace: UInt64 = 5) -> TaskDefinition {
    TaskDefinition(
        key: TaskKey(kind: "appRefresh", identifier: name), budget: .seconds(budget), cancelGrace: .seconds(grace),
        handler: .swift)
}

extension [SchedulerAction] {
    /// A compact trace: `start`, `cancel`, `kill`, `started`, `cancelling`, `killing`, `ended:<outcome>`,
    /// `coalesced`, `waiting`, `queued`, `overflow`, `retry:<next attempt>`, `persist`, `settle:<records>`,
    /// `inhibit:<lock>`, `release:<lock>`.
    var trace: [String] {
        filter { if case .persistHealth = $0 { false } else { true } }.map { action in
            switch action {
            case .start: return "start"
            case .cancel: return "cancel"
            case .kill: return "kill"
            case .report(.started): return "started"
            case .report(.cancelling): return "cancelling"
            case .report(.killing): return "killing"
            case .report(.ended(let run)): return "ended:\(run.outcome!.rawValue)"
            case .report(.coalesced): return "coalesced"
            case .report(.waiting): return "waiting"
            case .report(.queued): return "queued"
            case .report(.overflow): return "overflow"
            case .report(.refused): return "refused"
            case .report(.skipped): return "skipped"
            case .report(.retryWaits): return "retry-waits"
            case .report(.retryDropped): return "retry-dropped"
            case .report(.deferred(let run)):
                return "deferred:" + run.waitingFor.map(\.description).joined(separator: ",")
            case .report(.retryScheduled(let run, _)): return "retry:\(run.attempt + 1)"
            case .report(.progress(let run)): return "progress:\(run.progress?.completed.map(String.init) ?? "-")"
            case .persistTrigger: return "persist"
            case .persistRequest(_, let realtime): return realtime == nil ? "request-spent" : "request"
            case .settle(let records): return "settle:" + records.joined(separator: ",")
            case .persistHealth: return "health"  // left out above: the health tests read it
            case .alert(.overdue): return "alert:overdue"
            case .alert(.failing(_, let n, _)): return "alert:failing:\(n)"
            case .alert(.recovered(_, let from, _)): return "alert:recovered:\(from)"
            case .alert(.paused): return "alert:paused"
            case .alert(.resumed): return "alert:resumed"
            case .inhibit(let lock): return "inhibit:\(lock.rawValue)"
            case .release(let lock): return "release:\(lock.rawValue)"
            }
        }
    }

    var endedRun: Run? {
        for case .report(.ended(let run)) in self { return run }
        return nil
    }
}
