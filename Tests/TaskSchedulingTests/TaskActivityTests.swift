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
        used.currentRunID = "r1"
        used.queue.append("r2")
        used.lastTrigger = start
        #expect(used != fresh)
        used.currentRunID = nil
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
}
