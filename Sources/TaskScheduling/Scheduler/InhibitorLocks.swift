/// The logind inhibitor locks taskd holds, as the scheduler decides them (`WatchSleep=`): the
/// delay lock from the first run on, let go while the system sleeps once no run delays it; the
/// block lock while a `Sleep=block` run is active. Each change is an `.inhibit`/`.release` action.
struct InhibitorLocks: Sendable {
    /// `[Daemon] WatchSleep=`: without it taskd holds no lock.
    let watchesSleep: Bool
    /// Whether a run ever started: before the first there is nothing sleep could cut (and a
    /// daemon that never runs anything never talks to logind).
    var runStarted = false
    private(set) var holdsDelay = false
    private(set) var holdsBlock = false

    /// The locks held now.
    var held: Set<SleepInhibitor> {
        Set([holdsDelay ? .delay : nil, holdsBlock ? .block : nil].compactMap { $0 })
    }

    /// Appends to `actions` what takes the locks from what they were to what the runs need now:
    /// `delaying` active runs sleep waits for, `blocking` active runs of `Sleep=block` tasks.
    mutating func follow(delaying: Int, blocking: Int, sleeping: Bool, actions: inout [SchedulerAction]) {
        let delay = watchesSleep && runStarted && !(sleeping && delaying == 0)
        if delay != holdsDelay {
            holdsDelay = delay
            actions.append(delay ? .inhibit(.delay) : .release(.delay))
        }
        let block = watchesSleep && blocking > 0
        if block != holdsBlock {
            holdsBlock = block
            actions.append(block ? .inhibit(.block) : .release(.block))
        }
    }
}
