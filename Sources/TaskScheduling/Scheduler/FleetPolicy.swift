/// Which runs of a fleet task are claimed in etcd, and what a run whose claim etcd could not answer
/// does (`FleetUnavailable=`, `MaxDeferSec=`): the policy, pure, that the daemon's fleet component
/// follows.
public enum FleetPolicy {
    /// True when a run of this task is claimed in the fleet before it starts: every run of
    /// `Fleet=max:N`; for `Fleet=once`, the runs of calendar slots (timers, catch-ups, takeovers,
    /// and a slot's run cut short by a crash or restart, run again), the only ones every host names
    /// alike. A wake or a retry runs on its host.
    public static func claims(_ run: Run, _ definition: TaskDefinition) -> Bool {
        switch definition.fleet {
        case .host: return false
        case .max: return true
        case .once:
            return !definition.onCalendar.isEmpty && [.timer, .catchup, .takeover, .resume].contains(run.trigger)
        }
    }

    /// What a run does whose claim etcd could not answer.
    public enum Unreachable: Equatable, Sendable {
        /// Ask again at this instant (CLOCK_MONOTONIC µs).
        case askAgain(at: UInt64)
        /// Run here unclaimed (`FleetUnavailable=local`).
        case runHere
        /// Do not run (`FleetUnavailable=skip`, or `wait` past `MaxDeferSec=`: `gaveUp`).
        case skip(gaveUp: Bool)
    }

    /// How long a run that waits for etcd (`FleetUnavailable=wait`) waits before it asks again, µs.
    public static let claimRetry: UInt64 = 1_000_000

    /// The decision for a run whose claim etcd could not answer at `now` (CLOCK_MONOTONIC µs),
    /// under `policy`, giving up at `giveUpAt` (nil: never).
    public static func unreachable(_ policy: FleetUnavailablePolicy, giveUpAt: UInt64?, at now: UInt64) -> Unreachable {
        let gaveUp = giveUpAt.map { now >= $0 } ?? false
        switch policy {
        case .wait where !gaveUp: return .askAgain(at: min(now &+ claimRetry, giveUpAt ?? .max))
        case .local: return .runHere
        case .skip, .wait: return .skip(gaveUp: gaveUp)
        }
    }

    /// The reason a run cancelled before its claim was won ends with, if its cancellation was its
    /// budget's: for `Fleet=once`, `fleet-unavailable` (ended `cancelled`, never retried: a retry
    /// is not claimed, and the slot may run on another host); `max:N` keeps `budget` (its retry
    /// claims a place again). Any other cancellation keeps its own reason.
    public static func unclaimedEnd(_ mode: FleetMode) -> CancelReason {
        mode == .once ? .fleetUnavailable : .requested
    }

    /// Whether a claimed run that ended ran its slot (done), or gives it back for a host to take
    /// over: not when its fence was lost (another host may hold it now), nor when taskd's stop,
    /// restart, upgrade or the system's sleep cut it short.
    public static func ranSlot(_ run: Run) -> Bool {
        !(run.cancelReason.map { $0.keepsWakes || $0 == .fenceLost || $0 == .sleep } ?? false)
    }
}
