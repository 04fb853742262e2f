import Testing

@testable import TaskScheduling

/// The fleet's policy, pure: which runs are claimed in etcd, and what a run whose claim etcd could
/// not answer does (`FleetUnavailable=`, `MaxDeferSec=`), at instants of a manual clock.
@Suite("FleetPolicy: claimed runs and FleetUnavailable=")
struct FleetPolicyTests {
    func task(_ mode: FleetMode, calendar: Bool) throws -> TaskDefinition {
        var d = commandTask("t")
        d.fleet = mode
        if calendar { d.onCalendar = [try CalendarSpec(parsing: "*:*:00")] }
        return d
    }

    func run(_ trigger: Trigger, cancelled reason: CancelReason? = nil) -> Run {
        var run = Run(
            id: "r1", key: TaskKey(kind: "appRefresh", identifier: "t"), trigger: trigger, attempt: 1,
            queued: ClockReading(monotonic: 0, realtime: 0), budget: .seconds(30), cancelGrace: .seconds(5),
            inProcess: false)
        if let reason { run.phase = .cancelling(reason) }
        return run
    }

    @Test("Fleet=once claims a calendar task's slots (timer, catch-up, takeover, resume), not wakes or retries")
    func claimsOnce() throws {
        let once = try task(.once, calendar: true)
        for trigger in [Trigger.timer, .catchup, .takeover, .resume] { #expect(FleetPolicy.claims(run(trigger), once)) }
        for trigger in [Trigger.wake, .retry] { #expect(!FleetPolicy.claims(run(trigger), once)) }
        #expect(!FleetPolicy.claims(run(.timer), try task(.once, calendar: false)), "no calendar: no slot to name")
        #expect(FleetPolicy.claims(run(.wake), try task(.max(2), calendar: false)), "max:N claims every run")
        #expect(!FleetPolicy.claims(run(.timer), try task(.host, calendar: true)))
    }

    @Test("etcd unreachable: wait asks again a second later, until MaxDeferSec=; local runs; skip does not")
    func unreachable() {
        let now: UInt64 = 10_000_000
        #expect(FleetPolicy.unreachable(.wait, giveUpAt: nil, at: now) == .askAgain(at: now + 1_000_000))
        #expect(FleetPolicy.unreachable(.wait, giveUpAt: now + 300_000, at: now) == .askAgain(at: now + 300_000))
        #expect(FleetPolicy.unreachable(.wait, giveUpAt: now, at: now) == .skip(gaveUp: true))
        #expect(FleetPolicy.unreachable(.local, giveUpAt: nil, at: now) == .runHere)
        #expect(FleetPolicy.unreachable(.local, giveUpAt: now - 1, at: now) == .runHere)
        #expect(FleetPolicy.unreachable(.skip, giveUpAt: nil, at: now) == .skip(gaveUp: false))
    }

    @Test("a run cancelled before its claim: once ends fleet-unavailable, max:N keeps requested")
    func unclaimedEnd() {
        #expect(FleetPolicy.unclaimedEnd(.once) == .fleetUnavailable)
        #expect(FleetPolicy.unclaimedEnd(.max(3)) == .requested)
    }

    @Test("a claimed run's slot is done unless its fence was lost or a stop, restart, upgrade or sleep cut it")
    func ranSlot() {
        #expect(FleetPolicy.ranSlot(run(.timer)))
        #expect(FleetPolicy.ranSlot(run(.timer, cancelled: .budget)))
        #expect(FleetPolicy.ranSlot(run(.timer, cancelled: .requested)))
        for reason in [CancelReason.fenceLost, .sleep, .shutdown, .restart, .upgrade] {
            #expect(!FleetPolicy.ranSlot(run(.timer, cancelled: reason)), "\(reason)")
        }
    }
}
