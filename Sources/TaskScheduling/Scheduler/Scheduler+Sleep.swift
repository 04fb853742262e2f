/// System sleep: runs are cancelled before the system sleeps and run again after it resumes;
/// timers catch up what the sleep made them miss.
extension Scheduler {
    /// The system is about to sleep (logind's `PrepareForSleep`): no run starts until `resumed`,
    /// and every running run whose task has `Sleep=cancel` is cancelled (reason `sleep`), its hard
    /// stop due within nine tenths of `maxDelay` (logind's `InhibitDelayMaxSec=`) so that it ends
    /// before logind stops waiting. The delay inhibitor goes as soon as no run delays the sleep.
    public mutating func prepareForSleep(maxDelay: UInt64, at now: ClockReading) -> [SchedulerAction] {
        isSleeping = true
        var actions: [SchedulerAction] = []
        for id in runs.keys.sorted() {
            guard let run = runs[id], case .running = run.phase, !run.blocksSleep else { continue }
            cancel(run, reason: .sleep, killBy: now.monotonic &+ maxDelay / 10 * 9, at: now, actions: &actions)
        }
        return endBatch(actions)
    }

    /// How many runs sleep cut short wait to run again at `resumed`.
    public var cutBySleepCount: Int { cutBySleep.values.reduce(0) { $0 + $1.count } }

    /// Whether a run of a `Sleep=block` task is active: taskd then holds a sleep block inhibitor.
    public var runsBlockSleep: Bool { runsBlockingSleep > 0 }

    /// The end of every public input that can start or end a run, or change whether the system
    /// sleeps: the inhibitor locks follow the runs (`InhibitorLocks`), in O(1) from the counts
    /// kept as runs start and end. Returns `actions` with the lock changes appended.
    mutating func endBatch(_ actions: consuming [SchedulerAction]) -> [SchedulerAction] {
        inhibitors.follow(
            delaying: runsDelayingSleep, blocking: runsBlockingSleep, sleeping: isSleeping, actions: &actions)
        return actions
    }

    /// The system woke up (or its sleep failed): calendars catch up what they missed as
    /// `CatchUp=` says, `Persistent=` interval timers count the time asleep, the runs sleep cut
    /// short run again (trigger `resume`), waiting runs start, and the delay inhibitor, if taskd
    /// held it before the sleep, is taken again.
    public mutating func resumed(at now: ClockReading) -> [SchedulerAction] {
        isSleeping = false
        _ = clockChanged(at: now)
        for key in tasks.keys.sorted() where tasks[key]!.definition.persistent {
            if let last = tasks[key]!.lastTrigger?.realtime, tasks[key]!.inProgress.isEmpty {
                tasks[key]!.catchUpIntervals(after: last, now: now)
            }
        }
        var actions: [SchedulerAction] = []
        for (key, requests) in cutBySleep.sorted(by: { $0.key < $1.key }) {
            for request in requests { _ = trigger(key, request, at: now, actions: &actions) }
        }
        cutBySleep = [:]
        return endBatch(actions + pump(at: now))
    }
}
