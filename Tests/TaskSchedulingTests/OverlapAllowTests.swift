import Testing

@testable import TaskScheduling

/// `Overlap=allow` with `MaxInstances=`: parallel runs of one task, each its task's own, on the
/// manual clock.
@Suite("Overlap=allow and MaxInstances= (manual clock)")
struct OverlapAllowTests {
    var clock = ManualClock()

    func scheduler(maxInstances: Int, maxAttempts: Int = 1, slots: Int = 16) -> Scheduler {
        var d = policyTask("p", overlap: .allow, queueLimit: 100, maxAttempts: maxAttempts)
        d.maxInstances = maxInstances
        return Scheduler(
            definitions: [d], startedAt: clock.now, random: SeededRandom(seed: 11), maxConcurrentRuns: slots)
    }

    /// The task's runs in progress, oldest first.
    func running(_ s: Scheduler) -> [String] {
        let state = s.tasks[TaskKey(kind: "processing", identifier: "p")]!
        return [state.currentRunID].compactMap { $0 } + state.instances
    }

    @Test("each trigger starts a run beside the others up to MaxInstances=; the next waits and starts when one ends")
    func upToTheLimit() {
        var s = scheduler(maxInstances: 2)
        let a = s.wakeOne("p", record: "a", at: clock.now)
        let b = s.wakeOne("p", record: "b", at: clock.at(seconds: 1))
        let c = s.wakeOne("p", record: "c", at: clock.at(seconds: 2))
        #expect(a.disposition == .started && b.disposition == .started && c.disposition == .queued)
        #expect(running(s) == [a.run.id, b.run.id])
        #expect(s.runs[b.run.id]?.phase == .running && s.runs[c.run.id]?.phase == .queued)
        let why = s.explain(a.run.key, at: clock.at(seconds: 2)).first { $0.code == .queuedBehind }
        #expect(why?.text.hasSuffix("(Overlap=allow, at MaxInstances=2)") == true, "\(String(describing: why))")
        // The first ends: the second becomes the current run, the queued one starts beside it.
        let end = s.handlerEnded(runID: a.run.id, termination: .exited(0), at: clock.at(seconds: 5))
        #expect(end.trace == ["ended:completed", "settle:a", "start", "started"])
        #expect(running(s) == [b.run.id, c.run.id])
        _ = s.handlerEnded(runID: b.run.id, termination: .exited(0), at: clock.at(seconds: 6))
        _ = s.handlerEnded(runID: c.run.id, termination: .exited(0), at: clock.at(seconds: 7))
        #expect(running(s).isEmpty && s.runs.isEmpty)
        #expect(s.tasks[a.run.key]?.lastRun?.id == c.run.id)
        #expect(s.tasks[a.run.key]?.isSpent == true)
    }

    @Test("without MaxInstances= every trigger runs at once, as slots allow; a wake id joins its run")
    func unlimitedAndIDs() {
        var s = scheduler(maxInstances: 0)
        let first = s.wakeOne("p", id: "x", at: clock.now)
        for _ in 0..<4 { #expect(s.wakeOne("p", at: clock.now).disposition == .started) }
        #expect(running(s).count == 5)
        let joined = s.wakeOne("p", id: "x", at: clock.now)
        #expect(joined.disposition == .coalesced && joined.run.id == first.run.id)
        #expect(s.wakeOne("p", id: "y", at: clock.now).disposition == .started)
        #expect(running(s).count == 6 && s.runs[first.run.id]?.phase == .running)
    }

    @Test("cancel of one run starts the next queued; cancel of the task cancels every run")
    func cancel() throws {
        var s = scheduler(maxInstances: 2)
        let a = s.wakeOne("p", at: clock.now)
        let b = s.wakeOne("p", at: clock.now)
        let c = s.wakeOne("p", at: clock.now)
        let (one, _) = try s.cancel(target: b.run.id, at: clock.at(seconds: 1))
        #expect(one.map(\.id) == [b.run.id])
        #expect(running(s) == [a.run.id, c.run.id] && s.runs[c.run.id]?.phase == .running)
        let (all, _) = try s.cancel(target: "p", at: clock.at(seconds: 2))
        #expect(Set(all.map(\.id)) == [a.run.id, c.run.id])
        #expect(running(s).isEmpty)
    }

    @Test("sleep cuts every run beside the others short; each runs again at the resume with its own wakes")
    func sleepRunsEachAgain() {
        var s = scheduler(maxInstances: 3)
        let a = s.wakeOne("p", record: "a", at: clock.now)
        let b = s.wakeOne("p", record: "b", at: clock.now)
        let sleep = s.prepareForSleep(maxDelay: 5_000_000, at: clock.at(seconds: 1))
        #expect(sleep.trace.filter { $0 == "cancel" }.count == 2)
        _ = s.handlerEnded(runID: a.run.id, termination: .signaled(15), at: clock.at(seconds: 2))
        _ = s.handlerEnded(runID: b.run.id, termination: .signaled(15), at: clock.at(seconds: 2))
        #expect(s.cutBySleepCount == 2 && running(s).isEmpty)
        let resumed = s.resumed(at: clock.at(seconds: 60))
        #expect(resumed.trace.filter { $0 == "start" }.count == 2)
        let again = running(s).compactMap { s.runs[$0] }
        #expect(again.map(\.trigger) == [.resume, .resume])
        #expect(again.map(\.previousAttemptID) == [a.run.id, b.run.id])
        #expect(again.map(\.records) == [["a"], ["b"]])
        #expect(s.cutBySleepCount == 0)
    }

    @Test("a run that fails retries; another failing meanwhile rides with that retry")
    func retries() {
        var s = scheduler(maxInstances: 3, maxAttempts: 2)
        let a = s.wakeOne("p", record: "a", at: clock.now)
        let b = s.wakeOne("p", record: "b", at: clock.now)
        let first = s.handlerEnded(runID: a.run.id, termination: .exited(1), at: clock.at(seconds: 1))
        #expect(first.trace.contains("retry:2"))
        _ = s.handlerEnded(runID: b.run.id, termination: .exited(1), at: clock.at(seconds: 1))
        #expect(s.tasks[a.run.key]?.retry?.records == ["a", "b"])
    }

    @Test("a reload restarts each run in progress in its place: the current first, then those beside it")
    func reloadRestartsInPlace() {
        // Under the new definition: MaxInstances=1 lets one run; replace keeps the last restart.
        for (maxInstances, overlap) in [(0, OverlapPolicy.allow), (1, .allow), (0, .replace)] {
            var s = scheduler(maxInstances: 3)
            let old = ["a", "b", "c"].map { s.wakeOne("p", record: $0, at: clock.now).run }
            var d = s.tasks[old[0].key]!.definition
            d.maxInstances = maxInstances
            d.overlap = overlap
            d.budget = .seconds(60)
            let (diff, _) = s.reload([d], maxConcurrentRuns: 16, at: clock.at(seconds: 1))
            #expect(diff.changed == [old[0].key])
            #expect(old.allSatisfy { s.runs[$0.id]?.phase == .cancelling(.reconfigured) }, "\(overlap)")
            let state = s.tasks[old[0].key]!
            let restarted = running(s).map { s.runs[$0]!.records }
            let queued = state.queue.map { s.runs[$0]!.records }
            switch (maxInstances, overlap) {
            case (0, .allow): #expect(restarted == [["a"], ["b"], ["c"]] && queued.isEmpty)
            case (1, _): #expect(restarted == [["a"]] && queued == [["b"], ["c"]])
            default: #expect(restarted == [["c"]] && queued.isEmpty)
            }
        }
    }

    @Test("10,000 random wakes, ends and cancels: never more than MaxInstances= at once, none left waiting with room")
    func property() throws {
        var s = scheduler(maxInstances: 3, slots: 64)
        var random = SeededRandom(seed: 47)
        var now = clock.now
        var peak = 0
        for step in 0..<10_000 {
            now = now.advanced(by: 1_000)
            let live = running(s)
            switch random.next() % 10 {
            case 0..<5: _ = s.wakeOne("p", record: "w\(step)", at: now)
            case 5..<9 where !live.isEmpty:
                let id = live[Int(random.next() % UInt64(live.count))]
                _ = s.handlerEnded(runID: id, termination: .exited(0), at: now)
            case 9 where !live.isEmpty:
                _ = try s.cancel(target: live[Int(random.next() % UInt64(live.count))], at: now)
                // The cancelled run ends at once, as a command does on SIGTERM.
                for id in s.runs.keys.sorted() where s.runs[id]!.fenced {
                    _ = s.handlerEnded(runID: id, termination: .signaled(15), at: now)
                }
            default: break
            }
            let state = s.tasks[TaskKey(kind: "processing", identifier: "p")]!
            let inProgress = running(s)
            peak = max(peak, inProgress.count)
            #expect(inProgress.count <= 3, "step \(step)")
            #expect(inProgress.allSatisfy { s.runs[$0]?.phase == .running }, "step \(step)")
            #expect(state.queue.isEmpty || inProgress.count == 3, "a run waits with room at step \(step)")
        }
        #expect(peak == 3)
    }
}
