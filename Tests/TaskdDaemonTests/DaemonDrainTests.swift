import Synchronization
import TaskScheduling
import TaskdProtocol
import Testing

@testable import TaskdDaemon

/// `Drain` and `EndDrain` on the manual daemon: the answer comes when the last active run ends, or
/// at the timeout with the runs still active; nothing starts meanwhile; the end starts what waited.
@Suite("Daemon on manual ports: drain", .timeLimit(.minutes(1)))
struct DaemonDrainTests {
    typealias F = ManualDaemonFixture

    /// The answers a `Drain` call got, in order.
    final class Answers: Sendable {
        private let answers = Mutex<[(drained: Bool, runs: [String])]>([])
        func record(_ drained: Bool, _ runs: [RunInfo]) { answers.withLock { $0.append((drained, runs.map(\.runId))) } }
        var all: [(drained: Bool, runs: [String])] { answers.withLock { $0 } }
    }

    func drain(_ f: F, timeout: TimeSpan? = nil, peer: PeerCredentials = F.root) async throws -> Answers {
        let answers = Answers()
        try await f.onLoop { try $0.drain(timeout: timeout?.microseconds, peer: peer, reply: answers.record) }
        return answers
    }

    @Test("the answer waits for the run in progress; a wake meanwhile waits, and starts at the end of the drain")
    func answersWhenTheLastRunEnds() async throws {
        let f = await F([F.task("fetch"), F.task("other")])
        let running = try await f.wake("fetch")[0].runId
        let answers = try await drain(f)
        #expect(answers.all.isEmpty)
        #expect(f.entries(.drainStarted).first?["TASKD_ACTIVE_RUNS"] == "1")
        let waiting = try await f.wake("other")
        #expect(waiting.map(\.state) == [.queued] && f.started("other").isEmpty)
        let why = try await f.onLoop { try $0.why(name: "other") }.1
        #expect(why.first?.0.code == .draining && why.first?.1 == .drainStarted)
        await f.end(running)
        #expect(answers.all.count == 1 && answers.all.first?.drained == true && answers.all.first?.runs == [])
        #expect(f.started("other").isEmpty, "the drain lasts after its answer")
        let ended = try await f.onLoop { try $0.endDrain(peer: F.root) }
        #expect(ended == 1 && f.started("other").count == 1)
        #expect(f.entries(.drainEnded).first?["TASKD_WAITING_RUNS"] == "1")
        #expect(try await f.onLoop { try $0.endDrain(peer: F.root) } == 0, "no drain to end")
    }

    @Test("with no run active the answer is at once")
    func answersAtOnce() async throws {
        let f = await F([F.task("fetch")])
        let answers = try await drain(f, timeout: .seconds(5))
        #expect(answers.all.count == 1 && answers.all.first?.drained == true)
    }

    @Test("at the timeout the answer names the runs still active; the drain goes on")
    func timeout() async throws {
        let f = await F([F.task("fetch")])
        let running = try await f.wake("fetch")[0].runId
        let answers = try await drain(f, timeout: .seconds(5))
        await f.advance(by: .milliseconds(4_999))
        #expect(answers.all.isEmpty)
        await f.advance(by: .milliseconds(1))
        #expect(answers.all.count == 1 && answers.all.first?.drained == false)
        #expect(answers.all.first?.runs == [running])
        // A second call, with no timeout, is answered when the run ends.
        let later = try await drain(f)
        await f.end(running)
        #expect(later.all.count == 1 && later.all.first?.drained == true && answers.all.count == 1)
    }

    @Test("the end of the drain answers a call still waiting, not drained")
    func endAnswersWaitingCalls() async throws {
        let f = await F([F.task("fetch")])
        _ = try await f.wake("fetch")
        let answers = try await drain(f)
        _ = try await f.onLoop { try $0.endDrain(peer: F.root) }
        #expect(answers.all.count == 1 && answers.all.first?.drained == false)
    }

    @Test("only root or taskd's own user may drain")
    func adminOnly() async throws {
        let f = await F([F.task("fetch")])
        let stranger = PeerCredentials(pid: 2, uid: 4242, gid: 4242)
        await #expect(throws: DaemonError.self) { _ = try await drain(f, peer: stranger) }
        await #expect(throws: DaemonError.self) { _ = try await f.onLoop { try $0.endDrain(peer: stranger) } }
        #expect(f.entries(.drainStarted).isEmpty)
    }
}
