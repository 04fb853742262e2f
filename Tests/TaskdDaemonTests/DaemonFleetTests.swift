import TaskScheduling
import TaskdFleet
import TaskdTestSupport
import Testing

@testable import TaskdDaemon

/// Fleet runs on manual ports: the daemon claims a run's slot before its handler starts, and
/// `FleetUnavailable=` decides what a run does while etcd cannot be reached; `why` and `status` say
/// what the run waits for. etcd itself is `ManualFleet`: the test answers each claim.
@Suite("Daemon on manual ports: fleet claims and FleetUnavailable=", .timeLimit(.minutes(1)))
struct DaemonFleetTests {
    typealias F = ManualDaemonFixture

    static func fleetTask(
        _ name: String, _ mode: FleetMode = .max(1), _ change: (inout TaskDefinition) -> Void = { _ in }
    ) -> TaskDefinition {
        F.task(name) {
            $0.fleet = mode
            change(&$0)
        }
    }

    func why(_ f: F, _ name: String) async throws -> [WhyReason] {
        try await f.onLoop { try $0.why(name: name) }.1.map(\.0)
    }

    @Test("Fleet=once: a timer's run claims its slot, starts with the token once won, and marks the slot done")
    func onceClaimsTheSlot() async throws {
        let f = await F(
            [Self.fleetTask("report", .once) { $0.onCalendar = [try! CalendarSpec(parsing: "*:*:00")] }], fleet: true)
        await f.advance(by: .seconds(60))
        let ask = try #require(f.fleet.asks.first)
        #expect(ask.slot == ManualClock.origin.realtime + 60_000_000 && ask.task == "processing:report")
        #expect(f.launcher.started.isEmpty && f.entries(.runStarted).isEmpty)
        #expect(try await f.status("report").current?.waitingFor == "etcd, to claim its slot")
        let pending = try await why(f, "report")
        #expect(pending.contains { $0.code == .claimPending } && !pending.contains { $0.code == .running })
        #expect(pending.contains { $0.code == .fleet && $0.text.contains("this host is here") })

        await f.fleet.answer(.won(token: 41))
        let run = try #require(f.started("report").first)
        #expect(run.fenceToken == 41 && run.fleetHost == "here")
        #expect(f.entries(.runStarted).count == 1)
        await f.end(run.id)
        #expect(f.fleet.finished.map(\.runID) == [run.id] && f.fleet.finished.map(\.ran) == [true])
        #expect(try await f.lastRun("report")?.fenceToken == 41)
    }

    @Test("a claim lost to another host ends the run here: cancelled, reason elsewhere, naming the holder")
    func lostElsewhere() async throws {
        let f = await F([Self.fleetTask("roll")], fleet: true)
        _ = try await f.wake("roll")
        await f.fleet.answer(.lost(host: "web-2", token: 12))
        let last = try #require(try await f.lastRun("roll"))
        #expect(last.state == .cancelled && last.cancelReason == "elsewhere" && last.fleetHost == "web-2")
        #expect(f.launcher.started.isEmpty)
    }

    @Test(
        "FleetUnavailable=wait: the run asks again every second, at once when etcd answers again, and starts once won")
    func waitAsksAgain() async throws {
        let f = await F([Self.fleetTask("roll") { $0.fleetUnavailable = .wait }], fleet: true)
        let id = try await f.wake("roll")[0].runId
        await f.fleet.answer(.unavailable("connection refused"))
        #expect(f.entries(.fleetUnavailable).count == 1 && f.fleet.asks.isEmpty)
        let waiting = try await why(f, "roll")
        let reason = try #require(waiting.first { $0.code == .fleetUnavailable })
        #expect(reason.runID == id && reason.text.contains("connection refused") && !reason.text.contains("gives up"))
        #expect(try await f.status("roll").current?.waitingFor?.contains("FleetUnavailable=wait") == true)

        await f.advance(by: .milliseconds(999))
        #expect(f.fleet.asked == 1)
        await f.advance(by: .milliseconds(1))
        #expect(f.fleet.asked == 2)
        await f.fleet.answer(.unavailable("connection refused"))
        #expect(f.entries(.fleetUnavailable).count == 1, "the wait is journaled once")
        await f.fleet.send(.reachable(true, why: "a lease was renewed"))
        #expect(f.fleet.asked == 3, "asked again at once")
        await f.fleet.answer(.won(token: 9))
        #expect(f.started("roll").map(\.id) == [id])
        await f.advance(by: .seconds(5))
        #expect(f.fleet.asked == 3, "no claim is asked again once won")
    }

    @Test("FleetUnavailable=wait gives up after MaxDeferSec= from the run's start: cancelled, fleet-unavailable")
    func waitGivesUp() async throws {
        let f = await F(
            [
                Self.fleetTask("roll") {
                    $0.fleetUnavailable = .wait; $0.maxDefer = .milliseconds(2_500)
                }
            ], fleet: true)
        let id = try await f.wake("roll")[0].runId
        await f.fleet.answer(.unavailable("no leader"))
        #expect(try await why(f, "roll").contains { $0.code == .fleetUnavailable && $0.text.contains("gives up at") })
        for _ in 0..<2 {
            await f.advance(by: .seconds(1))
            await f.fleet.answer(.unavailable("no leader"))
        }
        let current = try await f.status("roll").current?.runId
        #expect(f.fleet.asked == 3 && current == id)
        await f.advance(by: .milliseconds(499))
        #expect(try await f.status("roll").current?.runId == id)
        await f.advance(by: .milliseconds(1))
        let info = try await f.status("roll")
        #expect(info.current == nil && info.last?.runId == id)
        #expect(info.last?.state == .cancelled && info.last?.cancelReason == "fleet-unavailable")
        #expect(f.fleet.asked == 3 && f.launcher.started.isEmpty)
        #expect(f.entries(.fleetUnavailable).last?["MESSAGE"]?.contains("gave up") == true)
    }

    @Test(
        "Fleet=once, wait: a run whose budget ends while it waits for etcd ends cancelled, fleet-unavailable, with no retry"
    )
    func budgetEndsTheWait() async throws {
        let f = await F(
            [
                Self.fleetTask("report", .once) {
                    $0.onCalendar = [try! CalendarSpec(parsing: "*:*:00")]
                    $0.fleetUnavailable = .wait
                    $0.budget = .seconds(10)
                    $0.cancelGrace = .seconds(2)
                    $0.retry.maxAttempts = 3
                }
            ], fleet: true)
        await f.advance(by: .seconds(60))
        await f.fleet.answer(.unavailable("connection refused"))
        for _ in 0..<8 {
            await f.advance(by: .seconds(1))
            await f.fleet.answer(.unavailable("connection refused"))
        }
        let info = try await f.status("report")
        #expect(info.current == nil && info.retryAttempt == nil)
        #expect(info.last?.state == .cancelled && info.last?.cancelReason == "fleet-unavailable")
        #expect(f.launcher.started.isEmpty)
    }

    @Test("a run cancelled while it waits to ask etcd again ends at once, and is not asked for again")
    func cancelWhileWaiting() async throws {
        let f = await F([Self.fleetTask("roll") { $0.fleetUnavailable = .wait }], fleet: true)
        let id = try await f.wake("roll")[0].runId
        await f.fleet.answer(.unavailable("connection refused"))
        _ = try await f.onLoop { try $0.cancel(target: id, peer: F.root) }
        let last = try #require(try await f.lastRun("roll"))
        #expect(last.runId == id && last.state == .cancelled && last.cancelReason == "requested")
        await f.advance(by: .seconds(3))
        #expect(f.fleet.asked == 1 && f.launcher.started.isEmpty)
    }

    @Test("FleetUnavailable=skip ends the run; local runs it here unclaimed")
    func skipAndLocal() async throws {
        let f = await F(
            [Self.fleetTask("skipper"), Self.fleetTask("local") { $0.fleetUnavailable = .local }], fleet: true)
        _ = try await f.wake("skipper")
        await f.fleet.answer(.unavailable("connection refused"))
        #expect(try await f.lastRun("skipper")?.cancelReason == "fleet-unavailable")
        _ = try await f.wake("local")
        await f.fleet.answer(.unavailable("connection refused"))
        let run = try #require(f.started("local").first)
        #expect(run.fleetHost == "here" && run.fenceToken == nil)
        #expect(f.entries(.fleetUnavailable).count == 2)
    }

    @Test("why says what FleetUnavailable= makes of the task's runs while etcd cannot be reached")
    func whyWhileUnreachable() async throws {
        let f = await F([Self.fleetTask("roll") { $0.fleetUnavailable = .local }], fleet: true)
        #expect(!(try await why(f, "roll")).contains { $0.code == .fleetUnavailable })
        await f.fleet.send(.reachable(false, why: "dial tcp: connection refused"))
        let down = try await why(f, "roll")
        #expect(down.first?.code == .fleetUnavailable)
        #expect(down.first?.text.contains("connection refused") == true && down.first?.text.contains("local") == true)
        await f.fleet.send(.reachable(true, why: "a claim was answered"))
        #expect(!(try await why(f, "roll")).contains { $0.code == .fleetUnavailable })
    }

    @Test("a fleet task on a taskd with no FleetEndpoints= runs as Fleet=host, and why says so")
    func noFleet() async throws {
        let f = await F([Self.fleetTask("roll")])
        let id = try await f.wake("roll")[0].runId
        #expect(f.started("roll").map(\.id) == [id])
        #expect(try await why(f, "roll").contains { $0.code == .fleet && $0.text.contains("no FleetEndpoints=") })
    }
}
