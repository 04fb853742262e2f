import Testing

@testable import TaskScheduling

/// `After=`: the runs one trigger starts go in the order their tasks' `After=` gives; a run waits,
/// holding no slot, until the runs it is after have ended, whatever their outcome.
@Suite("Scheduler: After= orders the runs of one trigger")
struct AfterOrderTests {
    static func task(_ name: String, after: [String] = [], every: UInt64? = nil) -> TaskDefinition {
        var d = commandTask(name, kind: "processing", budget: 600)
        d.after = after
        if let every { d.onStartup = [TimeSpan(microseconds: every)] }
        return d
    }

    func key(_ name: String) -> TaskKey { TaskKey(kind: "processing", identifier: name) }

    func started(_ actions: [SchedulerAction]) -> [String] {
        actions.compactMap { if case .start(let run) = $0 { run.key.identifier } else { nil } }
    }

    @Test("a wake of three tasks runs extract, then transform, then load, whatever their names' order")
    func chain() throws {
        let clock = ManualClock()
        var s = Scheduler(
            definitions: [
                Self.task("a-load", after: ["transform"]), Self.task("extract"),
                Self.task("transform", after: ["extract"]),
            ],
            startedAt: clock.now, random: SeededRandom(seed: 1), maxConcurrentRuns: 4)
        let (results, actions) = s.wake(
            [(key("a-load"), nil), (key("extract"), nil), (key("transform"), nil)], at: clock.now)
        #expect(results.map(\.run.key.identifier) == ["a-load", "extract", "transform"], "in the order given")
        #expect(started(actions) == ["extract"], "only the first of the order starts; the others wait")
        let extract = results[1].run
        let transform = results[2].run
        let load = results[0].run
        #expect(s.runs[transform.id]?.after == [extract.id] && s.runs[load.id]?.after == [transform.id])
        #expect(s.activeCount == 1 && s.ready.isEmpty, "the waiting runs hold no slot")
        let why = try #require(s.explain(key("transform"), at: clock.now).first { $0.code == .waitingForOrder })
        #expect(why.text.contains("waits for run \(extract.id.prefix(8)) of extract to end (After=)"))
        // Order, not requirement: a failed run lets the next one start.
        #expect(
            started(s.handlerEnded(runID: extract.id, termination: .exited(1), at: clock.at(seconds: 1))) == [
                "transform"
            ])
        #expect(
            started(s.handlerEnded(runID: transform.id, termination: .exited(0), at: clock.at(seconds: 2))) == [
                "a-load"
            ])
    }

    @Test("a wake of the later task alone waits for nothing")
    func alone() {
        let clock = ManualClock()
        var s = Scheduler(
            definitions: [Self.task("extract"), Self.task("transform", after: ["extract"])],
            startedAt: clock.now, random: SeededRandom(seed: 1), maxConcurrentRuns: 4)
        #expect(started(s.wake(key: key("transform"), at: clock.now).actions) == ["transform"])
    }

    @Test("timers due at the same moment are one trigger: their runs go in After= order")
    func timers() throws {
        let clock = ManualClock()
        var s = Scheduler(
            definitions: [Self.task("b", after: ["a"], every: 1_000_000), Self.task("a", every: 1_000_000)],
            startedAt: clock.now, random: SeededRandom(seed: 1), maxConcurrentRuns: 4)
        let fired = s.fire(at: clock.at(seconds: 1))
        #expect(started(fired) == ["a"])
        let a = try #require(s.runs.values.first { $0.key.identifier == "a" })
        #expect(started(s.handlerEnded(runID: a.id, termination: .exited(0), at: clock.at(seconds: 2))) == ["b"])
    }

    @Test("a waiting run that is cancelled leaves the order; the run it waited for ends as usual")
    func cancelledWhileWaiting() throws {
        let clock = ManualClock()
        var s = Scheduler(
            definitions: [Self.task("extract"), Self.task("transform", after: ["extract"])],
            startedAt: clock.now, random: SeededRandom(seed: 1), maxConcurrentRuns: 4)
        let (results, _) = s.wake([(key("extract"), nil), (key("transform"), nil)], at: clock.now)
        let transform = results[1].run
        let (cancelled, _) = try s.cancel(target: "transform", at: clock.now)
        #expect(cancelled.map(\.id) == [transform.id] && s.runs[transform.id] == nil)
        #expect(
            started(s.handlerEnded(runID: results[0].run.id, termination: .exited(0), at: clock.at(seconds: 1))).isEmpty
        )
        #expect(s.behind.isEmpty)
    }
}
