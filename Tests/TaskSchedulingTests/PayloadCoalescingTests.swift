import Testing

@testable import TaskScheduling

/// A wake's payload is never silently merged into a run that does not get it (issue 34): a payload
/// unlike the run's waits its turn; a full queue refuses it, saying so.
@Suite("Scheduler: wakes with payloads unlike the run in progress")
struct PayloadCoalescingTests {
    let key = TaskKey(kind: "appRefresh", identifier: "sync")

    func scheduler(queueLimit: Int = 8) -> (Scheduler, ManualClock) {
        var definition = commandTask("sync")
        definition.queueLimit = queueLimit
        let clock = ManualClock()
        return (Scheduler(definitions: [definition], startedAt: clock.now, random: SeededRandom(seed: 9)), clock)
    }

    @Test("Overlap=coalesce: the same payload or none joins the run; another payload queues behind it")
    func otherPayloadQueues() {
        var (s, clock) = scheduler()
        let first = s.wake(key: key, payload: #"{"city":"Oslo"}"#, record: "w1", at: clock.now).result!
        let same = s.wake(key: key, payload: #"{"city":"Oslo"}"#, record: "w2", at: clock.now).result!
        let none = s.wake(key: key, record: "w3", at: clock.now).result!
        let other = s.wake(key: key, payload: #"{"city":"Rome"}"#, record: "w4", at: clock.now).result!
        #expect([first, same, none, other].map(\.disposition) == [.started, .coalesced, .coalesced, .queued])
        #expect(same.run.id == first.run.id && none.run.id == first.run.id && other.run.id != first.run.id)
        #expect(s.runs[other.run.id]?.payload == #"{"city":"Rome"}"#)
        #expect(s.runs[first.run.id]?.records == ["w1", "w2", "w3"] && s.runs[other.run.id]?.records == ["w4"])
        // The queued run starts, with its own payload, when the first ends.
        let next = s.handlerEnded(runID: first.run.id, termination: .exited(0), at: clock.now)
        #expect(next.contains(.start(s.runs[other.run.id]!)))
    }

    @Test("a wake id decides alone, as task(id:) does: the same id joins whatever its payload")
    func wakeIDDecides() {
        var (s, clock) = scheduler()
        let first = s.wake(key: key, wakeID: "a", payload: #"{"n":1}"#, at: clock.now).result!
        let again = s.wake(key: key, wakeID: "a", payload: #"{"n":2}"#, at: clock.now).result!
        #expect(again.disposition == .coalesced && again.run.id == first.run.id)
    }

    @Test("a full queue: the last queued run's payload joins it; another payload is refused, its wake settled")
    func fullQueueRefuses() {
        var (s, clock) = scheduler(queueLimit: 1)
        _ = s.wake(key: key, payload: #"{"n":1}"#, record: "w1", at: clock.now)
        let queued = s.wake(key: key, payload: #"{"n":2}"#, record: "w2", at: clock.now).result!
        let joins = s.wake(key: key, payload: #"{"n":2}"#, record: "w3", at: clock.now)
        let refused = s.wake(key: key, payload: #"{"n":3}"#, record: "w4", at: clock.now)
        #expect(queued.disposition == .queued)
        #expect(joins.result?.disposition == .overflow && joins.result?.run.id == queued.run.id)
        #expect(refused.result?.disposition == .refused && refused.result?.run.id == queued.run.id)
        #expect(refused.actions.trace == ["settle:w4", "refused"])
        #expect(s.runs[queued.run.id]?.records == ["w2", "w3"])
    }

    @Test("wakes replayed after a restart follow the same rule: two payloads, two runs, every record kept")
    func replayed() {
        var (s, clock) = scheduler()
        // What the daemon does with the acknowledged wakes it finds at start: one `wake` each, in order.
        let a = s.wake(key: key, payload: #"{"n":1}"#, record: "r1", at: clock.now).result!
        let b = s.wake(key: key, payload: #"{"n":2}"#, record: "r2", at: clock.now).result!
        #expect(a.disposition == .started && b.disposition == .queued)
        #expect(s.runs[a.run.id]?.records == ["r1"] && s.runs[b.run.id]?.records == ["r2"])
    }
}
