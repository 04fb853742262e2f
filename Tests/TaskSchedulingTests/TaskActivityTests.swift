import Testing

@testable import TaskScheduling

@Suite("TaskActivity: a state's run bookkeeping out of line, copy on write")
struct TaskActivityTests {
    let start = ClockReading(monotonic: 1_000_000, realtime: 1_700_000_000_000_000)

    @Test("a state whose activity is back at its defaults equals a fresh one, and hashes alike")
    func backToDefaults() {
        let fresh = TaskState(definition: commandTask("a"), daemonStart: start)
        #expect(!fresh.holdsActivity, "an idle task's state keeps no box")
        var used = fresh
        used.inProgress = ["r1"]
        used.queue.append("r2")
        used.lastTrigger = start
        #expect(used != fresh)
        used.inProgress = []
        used.queue.removeAll()
        used.lastTrigger = nil
        #expect(used == fresh && used.hashValue == fresh.hashValue)
        #expect(!used.holdsActivity, "a box back at its defaults is dropped")
        var whole = fresh
        whole.activity = TaskActivity.idle
        #expect(!whole.holdsActivity)
    }

    @Test("an idle state reads its activity's defaults with no box; the first write makes one")
    func readsWithoutBox() {
        var state = TaskState(definition: commandTask("a"), daemonStart: start)
        #expect(state.currentRunID == nil && state.queue.isEmpty && state.randomDelay == 0 && state.catchUp.isEmpty)
        #expect(!state.holdsActivity, "reading the fields allocates nothing")
        state.randomDelay = 3
        #expect(state.holdsActivity && state.activity.randomDelay == 3)
    }

    @Test("copies of a state share its activity until one changes, and never see each other's changes")
    func copyOnWrite() {
        var one = TaskState(definition: commandTask("a"), daemonStart: start)
        one.queue = ["r1"]
        var two = one
        two.queue.append("r2")
        two.lastActivation = 5
        #expect(one.queue == ["r1"] && one.lastActivation == nil)
        #expect(two.queue == ["r1", "r2"] && two.lastActivation == 5)
        one.activity.randomDelay = 7
        #expect(one.randomDelay == 7 && two.randomDelay == 0)
    }

    @Test("isIdle is false as soon as any one field leaves its default, and names every field")
    func isIdleSeesEveryField() {
        let run = Run(
            id: "r1", key: TaskKey(kind: "appRefresh", identifier: "a"), trigger: .wake, attempt: 1, queued: start,
            budget: .seconds(1), cancelGrace: .seconds(1), inProcess: false)
        let retry = PendingRetry(due: 1, attempt: 2, wakeID: nil, payload: nil, records: [], failedRunID: "r1")
        let changes: [(String, (inout TaskActivity) -> Void)] = [
            ("inProgress", { $0.inProgress = ["r1"] }), ("queue", { $0.queue = ["r1"] }),
            ("retry", { $0.retry = retry }),
            ("lastRun", { $0.lastRun = run }), ("pendingStartup", { $0.pendingStartup = [1] }),
            ("lastActivation", { $0.lastActivation = 1 }), ("lastDeactivation", { $0.lastDeactivation = 1 }),
            ("randomDelay", { $0.randomDelay = 1 }), ("lastTrigger", { $0.lastTrigger = start }),
            ("requestedRealtime", { $0.requestedRealtime = 1 }), ("requestedMonotonic", { $0.requestedMonotonic = 1 }),
            ("catchUp", { $0.catchUp = [1] }), ("resumeAt", { $0.resumeAt = 1 }),
            ("calendarMemo", { $0.calendarMemo = [CalendarMemo(after: 1, next: nil)] }),
        ]
        #expect(TaskActivity.idle.isIdle)
        let fields = Mirror(reflecting: TaskActivity.idle).children.compactMap(\.label)
        #expect(Set(fields) == Set(changes.map(\.0)), "a new field of TaskActivity belongs in isIdle and here")
        for (name, change) in changes {
            var activity = TaskActivity.idle
            change(&activity)
            #expect(!activity.isIdle, "\(name) set")
            #expect(activity != .idle, "\(name) set")
        }
    }
}
