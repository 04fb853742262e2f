import Testing

@testable import TaskScheduling

@Suite("Retries with exponential backoff and seeded jitter (manual clock)")
struct RetryTests {
    var clock = ManualClock()

    @Test(
        "backoff doubles per attempt and stops at RetryBackoffMaxSec",
        arguments: [(1, 1_000_000), (2, 2_000_000), (3, 4_000_000), (4, 8_000_000), (5, 10_000_000), (40, 10_000_000)])
    func backoff(attempt: Int, expected: UInt64) {
        var policy = RetryPolicy()
        policy.backoff = .seconds(1)
        policy.backoffMax = .seconds(10)
        policy.jitter = 0
        #expect(policy.delay(after: attempt, unit: 0.7) == expected)
    }

    @Test("jitter spreads each delay over [d·(1−j), d·(1+j)] and never past the cap")
    func jitterBounds() {
        var policy = RetryPolicy()
        policy.backoff = .seconds(2)
        policy.backoffMax = .seconds(5)
        policy.jitter = 0.5
        #expect(policy.delay(after: 1, unit: 0) == 1_000_000)
        #expect(policy.delay(after: 1, unit: 0.5) == 2_000_000)
        #expect(policy.delay(after: 1, unit: 0.999_999) <= 3_000_000)
        #expect(policy.delay(after: 2, unit: 0.999) == 5_000_000)
    }

    @Test("a failed run is retried after its backoff as trigger retry, attempt 2, with its id and payload")
    func retryTiming() throws {
        var s = Scheduler(
            definitions: [policyTask("r", maxAttempts: 3, backoff: 2, backoffMax: 60, jitter: 0.25)],
            startedAt: clock.now, random: SeededRandom(seed: 11))
        let key = s.tasks.keys.first!
        let first = s.wake(key: key, wakeID: "w", payload: #"{"n":1}"#, record: "rec", at: clock.now).result!.run
        let end = s.handlerEnded(runID: first.id, termination: .exited(1), at: clock.at(seconds: 1))
        #expect(end.trace == ["ended:failed", "retry:2"])
        let retry = try #require(s.tasks[key]?.retry)
        let delay = retry.due - clock.at(seconds: 1).monotonic
        #expect(delay >= 1_500_000 && delay <= 2_500_000)
        #expect(s.nextDeadline == retry.due)

        let before = ClockReading(monotonic: retry.due - 1, realtime: clock.now.realtime)
        #expect(s.advance(to: before).isEmpty)
        let fire = ClockReading(monotonic: retry.due, realtime: clock.now.realtime)
        #expect(s.advance(to: fire).trace == ["start", "started"])
        let second = try #require(s.runs.values.first)
        #expect(second.trigger == .retry && second.attempt == 2)
        #expect(second.wakeID == "w" && second.payload == #"{"n":1}"#)
        #expect(second.records == ["rec"])

        // Attempt 3 is the last: its failure settles the wake instead of retrying.
        let e2 = s.handlerEnded(runID: second.id, termination: .signaled(11), at: fire.advanced(by: 1_000))
        #expect(e2.trace == ["ended:failed", "retry:3"])
        let due3 = s.tasks[key]!.retry!.due
        _ = s.advance(to: ClockReading(monotonic: due3, realtime: clock.now.realtime))
        let third = s.runs.values.first!
        #expect(third.attempt == 3)
        let e3 = s.handlerEnded(
            runID: third.id, termination: .exited(2), at: ClockReading(monotonic: due3 + 1, realtime: 0))
        #expect(e3.trace == ["ended:failed", "settle:rec"])
        #expect(s.tasks[key]?.retry == nil)
    }

    @Test("the same seed gives the same delays; another seed other ones")
    func seeded() {
        func delays(seed: UInt64) -> [UInt64] {
            var s = Scheduler(
                definitions: [policyTask("r", maxAttempts: 5, backoff: 1, backoffMax: 600, jitter: 0.5)],
                startedAt: ManualClock().now, random: SeededRandom(seed: seed))
            let key = s.tasks.keys.first!
            var out: [UInt64] = []
            var now = ManualClock().now
            var run = s.wake(key: key, at: now).result!.run
            for _ in 1..<5 {
                _ = s.handlerEnded(runID: run.id, termination: .exited(1), at: now)
                let due = s.tasks[key]!.retry!.due
                out.append(due - now.monotonic)
                now = ClockReading(monotonic: due, realtime: now.realtime)
                _ = s.advance(to: now)
                run = s.runs.values.first!
            }
            return out
        }
        #expect(delays(seed: 3) == delays(seed: 3))
        #expect(delays(seed: 3) != delays(seed: 4))
        for (i, d) in delays(seed: 3).enumerated() {
            let base = UInt64(1_000_000) << UInt64(i)
            #expect(d >= base / 2 && d <= base * 3 / 2)
        }
    }

    @Test(
        "expired and killed runs are retried too",
        arguments: [(UInt64(9), Termination.signaled(15), "ended:expired"), (10, .signaled(9), "ended:killed")])
    func expiredAndKilled(endAt: UInt64, termination: Termination, ended: String) {
        var s = Scheduler(
            definitions: [policyTask("r", maxAttempts: 2, budget: 10, grace: 2)], startedAt: clock.now,
            random: SeededRandom(seed: 1))
        let run = s.wakeOne("r", at: clock.now).run
        _ = s.advance(to: clock.at(seconds: Double(endAt)))
        #expect(
            s.handlerEnded(runID: run.id, termination: termination, at: clock.at(seconds: Double(endAt))).trace == [
                ended, "retry:2",
            ])
    }

    @Test(
        "no retry after a cancel, a completion, exit status 100 or PermanentFailure",
        arguments: [
            (Termination.exited(0), "ended:completed"), (.exited(100), "ended:failed"),
            (.threwNoRetry("bad input"), "ended:failed"),
        ])
    func noRetry(termination: Termination, ended: String) {
        var s = Scheduler(
            definitions: [policyTask("r", maxAttempts: 5)], startedAt: clock.now, random: SeededRandom(seed: 1))
        let run = s.wakeOne("r", record: "x", at: clock.now).run
        #expect(
            s.handlerEnded(runID: run.id, termination: termination, at: clock.at(seconds: 1)).trace == [
                ended, "settle:x",
            ])
        #expect(s.tasks[run.key]?.retry == nil)
    }

    @Test("a cancelled run is never retried, and cancel drops a pending retry")
    func cancelledNoRetry() throws {
        var s = Scheduler(
            definitions: [policyTask("r", maxAttempts: 5)], startedAt: clock.now, random: SeededRandom(seed: 1))
        let run = s.wakeOne("r", record: "x", at: clock.now).run
        _ = try s.cancel(target: "r", at: clock.at(seconds: 1))
        #expect(
            s.handlerEnded(runID: run.id, termination: .exited(1), at: clock.at(seconds: 2)).trace == [
                "ended:cancelled", "settle:x",
            ])
        let again = s.wakeOne("r", record: "y", at: clock.at(seconds: 3)).run
        #expect(
            s.handlerEnded(runID: again.id, termination: .exited(1), at: clock.at(seconds: 4)).trace == [
                "ended:failed", "retry:2",
            ])
        let (_, actions) = try s.cancel(target: "r", at: clock.at(seconds: 4.5))
        #expect(actions.trace == ["settle:y", "retry-dropped"])
        #expect(s.tasks[run.key]?.retry == nil)
    }

    @Test("a wake during the backoff starts a run at once and takes over the retry's wakes")
    func wakeDuringBackoff() {
        var s = Scheduler(
            definitions: [policyTask("r", maxAttempts: 5, backoff: 60)], startedAt: clock.now,
            random: SeededRandom(seed: 1))
        let run = s.wakeOne("r", record: "x", at: clock.now).run
        _ = s.handlerEnded(runID: run.id, termination: .exited(1), at: clock.at(seconds: 1))
        let fresh = s.wakeOne("r", record: "y", at: clock.at(seconds: 2))
        #expect(fresh.disposition == .started && fresh.run.attempt == 1)
        #expect(Set(s.runs[fresh.run.id]!.records) == ["x", "y"])
        #expect(s.tasks[run.key]?.retry == nil)
    }
}

@Suite("MaxConcurrentRuns: a FIFO queue with appRefresh ahead of processing (manual clock)")
struct ConcurrencyTests {
    var clock = ManualClock()

    @Test("runs beyond the limit wait; appRefresh goes ahead of processing; waiting time is recorded")
    func slots() {
        let tasks = [
            policyTask("p1"), policyTask("p2"), policyTask("p3"), policyTask("p4"),
            policyTask("refresh", kind: "appRefresh"),
        ]
        var s = Scheduler(definitions: tasks, startedAt: clock.now, random: SeededRandom(seed: 5), maxConcurrentRuns: 2)
        let p1 = s.wakeOne("p1", at: clock.now)
        let p2 = s.wakeOne("p2", at: clock.now)
        let p3 = s.wakeOne("p3", at: clock.at(seconds: 1))
        let p4 = s.wakeOne("p4", at: clock.at(seconds: 2))
        let refresh = s.wakeOne("refresh", at: clock.at(seconds: 3))
        #expect(p1.trace == ["start", "started"] && p2.trace == ["start", "started"])
        #expect(p3.trace == ["waiting"] && refresh.trace == ["waiting"])
        #expect(s.ready == [refresh.run.id, p3.run.id, p4.run.id])
        #expect(s.activeCount == 2)
        // A waiting run has no deadlines yet.
        #expect(s.nextDeadline == p1.run.cancelAt)

        let end = s.handlerEnded(runID: p1.run.id, termination: .exited(0), at: clock.at(seconds: 4))
        #expect(end.trace == ["ended:completed", "start", "started"])
        let started = s.runs[refresh.run.id]!
        #expect(started.phase == .running && started.waited == 1_000_000)
        #expect(started.cancelAt == clock.at(seconds: 4).monotonic + 25_000_000)
        _ = s.handlerEnded(runID: p2.run.id, termination: .exited(0), at: clock.at(seconds: 5))
        #expect(s.runs[p3.run.id]?.waited == 4_000_000)
        #expect(s.ready == [p4.run.id])
    }

    @Test("a cancelled run keeps its slot until its handler has ended")
    func cancelledHoldsSlot() throws {
        var s = Scheduler(
            definitions: [policyTask("a"), policyTask("b")], startedAt: clock.now, random: SeededRandom(seed: 5),
            maxConcurrentRuns: 1)
        let a = s.wakeOne("a", at: clock.now)
        let b = s.wakeOne("b", at: clock.now)
        #expect(b.trace == ["waiting"])
        _ = try s.cancel(target: "a", at: clock.at(seconds: 1))
        #expect(s.runs[b.run.id]?.phase == .queued)
        let end = s.handlerEnded(runID: a.run.id, termination: .signaled(15), at: clock.at(seconds: 2))
        #expect(end.trace == ["ended:cancelled", "start", "started"])
    }
}

@Suite("Acknowledged wakes are settled only once answered (manual clock)")
struct WakeRecordTests {
    var clock = ManualClock()

    @Test("records ride with the run that answers them; shutdown leaves them for the restart")
    func records() {
        var s = Scheduler(definitions: [policyTask("t")], startedAt: clock.now, random: SeededRandom(seed: 9))
        let run = s.wakeOne("t", record: "a", at: clock.now).run
        _ = s.wakeOne("t", record: "b", at: clock.now)
        #expect(
            s.handlerEnded(runID: run.id, termination: .exited(0), at: clock.at(seconds: 1)).trace == [
                "ended:completed", "settle:a,b",
            ])
        let second = s.wakeOne("t", record: "c", at: clock.at(seconds: 2)).run
        let stop = s.shutdown(at: clock.at(seconds: 3))
        #expect(stop.trace == ["cancel", "cancelling"])
        let end = s.handlerEnded(runID: second.id, termination: .signaled(15), at: clock.at(seconds: 4))
        #expect(end.trace == ["ended:cancelled"])
    }
}

@Suite("Reload: added, removed, changed and unchanged tasks (manual clock)")
struct ReloadTests {
    var clock = ManualClock()

    @Test("the diff, and what happens to each task's run")
    func diff() {
        let keep = policyTask("keep")
        let drop = policyTask("drop")
        let change = policyTask("change", budget: 30)
        var s = Scheduler(definitions: [keep, drop, change], startedAt: clock.now, random: SeededRandom(seed: 2))
        let kept = s.wakeOne("keep", at: clock.now)
        let dropped = s.wakeOne("drop", record: "d", at: clock.now)
        let changed = s.wakeOne("change", id: "v", record: "c", at: clock.now)

        var changedDefinition = change
        changedDefinition.budget = .seconds(60)
        let added = policyTask("new")
        let (diff, actions) = s.reload(
            [keep, changedDefinition, added], maxConcurrentRuns: 4, at: clock.at(seconds: 1))
        #expect(diff.added.map(\.identifier) == ["new"])
        #expect(diff.removed.map(\.identifier) == ["drop"])
        #expect(diff.changed.map(\.identifier) == ["change"])
        #expect(diff.unchanged.map(\.identifier) == ["keep"])
        #expect(actions.trace == ["cancel", "cancelling", "cancel", "cancelling", "start", "started"])

        #expect(s.runs[dropped.run.id]?.cancelReason == .removed)
        #expect(s.runs[changed.run.id]?.cancelReason == .reconfigured)
        #expect(s.runs[kept.run.id]?.phase == .running)
        #expect(s.tasks[dropped.run.key] == nil)
        // The restarted run has the new budget, the same trigger and id, and answers the same wake.
        let restart = s.runs[s.tasks[changed.run.key]!.currentRunID!]!
        #expect(restart.budget == .seconds(60) && restart.wakeID == "v" && restart.records == ["c"])
        // The removed task's run still ends properly, settling its wake; the reconfigured one settles nothing.
        #expect(
            s.handlerEnded(runID: dropped.run.id, termination: .signaled(15), at: clock.at(seconds: 2)).trace == [
                "ended:cancelled", "settle:d",
            ])
        #expect(
            s.handlerEnded(runID: changed.run.id, termination: .signaled(15), at: clock.at(seconds: 2)).trace == [
                "ended:cancelled"
            ])
    }

    @Test("an identical configuration changes nothing and emits no action")
    func identical() {
        let tasks = [policyTask("a"), policyTask("b", overlap: .queue)]
        var s = Scheduler(definitions: tasks, startedAt: clock.now, random: SeededRandom(seed: 2))
        _ = s.wakeOne("a", at: clock.now)
        let (diff, actions) = s.reload(tasks, maxConcurrentRuns: 4, at: clock.at(seconds: 1))
        #expect(diff.isEmpty && diff.unchanged.count == 2)
        #expect(actions.isEmpty)
    }

    @Test("a higher MaxConcurrentRuns starts waiting runs at once")
    func moreSlots() {
        let tasks = [policyTask("a"), policyTask("b")]
        var s = Scheduler(definitions: tasks, startedAt: clock.now, random: SeededRandom(seed: 2), maxConcurrentRuns: 1)
        _ = s.wakeOne("a", at: clock.now)
        #expect(s.wakeOne("b", at: clock.now).trace == ["waiting"])
        #expect(s.reload(tasks, maxConcurrentRuns: 2, at: clock.at(seconds: 1)).actions.trace == ["start", "started"])
    }
}
