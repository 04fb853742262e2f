import Testing

@testable import TaskScheduling

/// Conditions on a manual clock: a run waits for them holding no slot, starts the moment they
/// hold, gives up after MaxDeferSec=, and a run in progress is cancelled when one is lost.
@Suite("Scheduler: runs that wait for the machine to be ready")
struct ConditionTests {
    let key = TaskKey(kind: "processing", identifier: "backup")

    func scheduler(maxDefer: UInt64 = 0, lost: ConditionLostPolicy = .cancel, slots: Int = 4) -> (
        Scheduler, ManualClock
    ) {
        var definition = commandTask("backup", kind: "processing")
        definition.conditions = [.acPower]
        definition.maxDefer = .seconds(maxDefer)
        definition.conditionLost = lost
        let clock = ManualClock()
        var s = Scheduler(
            definitions: [definition, commandTask("other")], startedAt: clock.now, random: SeededRandom(seed: 4),
            maxConcurrentRuns: slots)
        _ = s.conditionsChanged(unheld: [.acPower], at: clock.now)  // on battery
        return (s, clock)
    }

    @Test("triggered on battery: the run waits (queued, waiting for AC power), holds no slot, and starts on AC")
    func waitsThenStarts() {
        var (s, clock) = scheduler(slots: 1)
        let wake = s.wake(key: key, at: clock.now)
        #expect(wake.actions.trace == ["deferred:ac-power"])
        let run = wake.result!.run
        #expect(s.runs[run.id]?.state == .queued && s.runs[run.id]?.waitingFor == [.acPower])
        #expect(s.activeCount == 0)
        // Another task takes the one slot meanwhile.
        #expect(s.wakeOne("other", at: clock.now).trace == ["start", "started"])
        _ = s.handlerEnded(
            runID: s.tasks[TaskKey(kind: "appRefresh", identifier: "other")]!.currentRunID!, termination: .exited(0),
            at: clock.now)
        #expect(s.runs[run.id]?.phase == .queued, "still on battery")
        let plugged = s.conditionsChanged(unheld: [], at: clock.advance(seconds: 30))
        #expect(plugged.trace == ["start", "started"])
        #expect(s.runs[run.id]?.waitingFor == [] && s.runs[run.id]?.waited == 30_000_000)
    }

    @Test("MaxDeferSec=: a run still waiting then gives up, cancelled (condition-timeout), and the task is free")
    func givesUp() {
        var (s, clock) = scheduler(maxDefer: 3600)
        let run = s.wake(key: key, at: clock.now).result!.run
        #expect(s.nextDeadline == clock.now.monotonic + 3_600_000_000)
        #expect(s.advance(to: clock.advance(seconds: 3599)).isEmpty)
        let gaveUp = s.advance(to: clock.advance(seconds: 1))
        #expect(gaveUp.trace == ["ended:cancelled"])
        let ended = gaveUp.compactMap { action -> Run? in
            if case .report(.ended(let run)) = action { return run }
            return nil
        }
        #expect(ended.first?.cancelReason == .conditionTimeout && s.runs[run.id] == nil)
        #expect(s.tasks[key]?.currentRunID == nil && s.deferred.isEmpty)
        #expect(s.conditionsChanged(unheld: [], at: clock.now).isEmpty, "nothing left to start")
    }

    @Test("ConditionLost=cancel: unplugged mid-run, the run is cancelled as at its budget; continue leaves it be")
    func lost() {
        for policy in [ConditionLostPolicy.cancel, .continue] {
            var (s, clock) = scheduler(lost: policy)
            _ = s.conditionsChanged(unheld: [], at: clock.now)
            let run = s.wake(key: key, at: clock.now).result!.run
            let unplugged = s.conditionsChanged(unheld: [.acPower], at: clock.advance(seconds: 10))
            if policy == .cancel {
                #expect(unplugged.trace == ["cancel", "cancelling"])
                #expect(s.runs[run.id]?.cancelReason == .conditionLost)
                #expect(s.runs[run.id]?.lostConditions == [.acPower], "the reason names the condition")
                #expect(s.runs[run.id]?.killAt == clock.now.monotonic + 5_000_000, "the hard stop one grace later")
                let ended = s.handlerEnded(runID: run.id, termination: .signaled(15), at: clock.advance(seconds: 1))
                #expect(ended.trace.first == "ended:cancelled")
            } else {
                #expect(unplugged.isEmpty && s.runs[run.id]?.phase == .running)
            }
        }
    }

    @Test("a cancel of a waiting run ends it at once; a task without conditions never waits")
    func cancelWhileWaiting() throws {
        var (s, clock) = scheduler()
        let run = s.wake(key: key, at: clock.now).result!.run
        let (cancelled, actions) = try s.cancel(target: run.id, at: clock.now)
        #expect(cancelled.first?.outcome == .cancelled && actions.trace == ["ended:cancelled"])
        #expect(s.deferred.isEmpty)
        #expect(s.wakeOne("other", at: clock.now).trace == ["start", "started"])
    }
}
