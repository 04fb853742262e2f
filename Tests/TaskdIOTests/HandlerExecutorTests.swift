import Synchronization
import Testing

@testable import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// What ran, in order, and on which thread.
private final class Trace: Sendable {
    private let entries = Mutex<[(String, UInt)]>([])

    func note(_ what: String) { entries.withLock { $0.append((what, UInt(pthread_self()))) } }
    var names: [String] { entries.withLock { $0.map(\.0) } }
    func thread(of what: String) -> UInt? { entries.withLock { $0.first { $0.0 == what }?.1 } }
    func has(_ what: String) -> Bool { thread(of: what) != nil }
}

/// An actor on the event loop, as the daemon's scheduler is.
private actor LoopActor {
    nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    /// From one loop job: notes "job", starts handlers that run `bodies` and queues "then" to
    /// follow them, as the daemon's timer tick does.
    func startHandlers(_ trace: Trace, _ bodies: [@Sendable () -> Void]) {
        trace.note("job")
        for body in bodies { Task(executorPreference: HandlerExecutor.shared) { body() } }
        EventLoop.shared.afterHandlerJobs { trace.note("then") }
        trace.note("job ends")
    }

    /// From one loop job: runs `body` as user code, noting "elsewhere" if it goes to its fallback
    /// (a thread of its own), as the daemon cancels a handler.
    func runUserCode(_ trace: Trace, _ body: @escaping @Sendable () -> Void) {
        trace.note("job")
        EventLoop.shared.runUserCode(body) { body in
            trace.note("elsewhere")
            _ = Thread.detach(body)
        }
        trace.note("job ends")
    }

    func ping() -> Bool { EventLoop.shared.isCurrent }

    func thread() -> UInt { UInt(pthread_self()) }
}

/// Polls `condition` every millisecond for up to 10 s (the loop and the pool run on other threads).
private func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<10_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Makes `attempt` until its premise held (it returns true), at most 10 times, each once handler
/// jobs would run on the loop's thread; false if it never held. Handler jobs and user code run on
/// the loop's thread only while no thread is stuck in earlier ones, else they go elsewhere, as
/// designed: another suite's handler, or under load a loop thread preempted past the stall limit,
/// holds a thread so for a moment. An attempt whose user code went elsewhere proves nothing.
private func whileInline(_ attempt: () async -> Bool) async -> Bool {
    for _ in 0..<10 {
        _ = await eventually { EventLoop.shared.runsHandlerJobsInline }
        if await attempt() { return true }
    }
    return false
}

// Serialized: a test's blocked handler holds a thread the others expect to find standing by.
@Suite("Handler executor", .serialized)
struct HandlerExecutorTests {
    @Test("a handler started by a loop job runs on the loop's thread after that job, before what follows it")
    func handlerRunsInline() async {
        let loop = LoopActor()
        let inline = await whileInline {
            let trace = Trace()
            await loop.startHandlers(
                trace, [{ trace.note(EventLoop.shared.isCurrent ? "handler on a held loop" : "handler") }])
            #expect(await eventually { trace.has("then") })
            // Same thread as the job that started it, which had left the loop while the handler ran.
            guard trace.thread(of: "handler") == trace.thread(of: "job") else { return false }
            #expect(trace.names == ["job", "job ends", "handler", "then"])
            return true
        }
        #expect(inline, "the handler never ran on the thread of the job that started it")
        #expect(await loop.ping())
    }

    @Test("a job a handler queues on the loop runs after it, and the loop's own thread never wakes itself for it")
    func handlerQueuesALoopJob() async {
        let loop = LoopActor()
        // Per handler: whether the loop stayed vacant (no takeover) while it queued its job, and
        // how many eventfd writes the loop's own threads made meanwhile. Counted inside the
        // handler: the counters are the process's, and other suites use the loop at the same time.
        let windows = Mutex<[(vacant: Bool, wakes: Int)]>([])
        for _ in 0..<20 {
            let trace = Trace()
            await loop.startHandlers(
                trace,
                [
                    {
                        let shared = EventLoop.shared
                        let (wakes, takeovers, vacant) = (shared.ownThreadWakes, shared.takeoverCount, shared.isVacant)
                        Task(executorPreference: EventLoop.shared) { trace.note("loop job") }
                        let undisturbed = vacant && shared.isVacant && shared.takeoverCount == takeovers
                        windows.withLock { $0.append((undisturbed, shared.ownThreadWakes - wakes)) }
                    }
                ])
            #expect(await eventually { trace.has("loop job") })
        }
        // The handler runs on the loop's thread, which left the loop vacant: whichever thread holds
        // it next looks at the queue before it waits, so no eventfd write is needed. (Should the
        // standby thread have taken the loop over meanwhile, under load, a write is right.)
        let vacant = windows.withLock { $0.filter(\.vacant) }
        #expect(!vacant.isEmpty)
        #expect(vacant.allSatisfy { $0.wakes == 0 })
    }

    @Test("a handler task started off the loop runs on the global executor")
    func handlerOffTheLoop() async {
        let loopThread = await LoopActor().thread()
        let (thread, held) = await Task(executorPreference: HandlerExecutor.shared) {
            (UInt(pthread_self()), EventLoop.shared.isCurrent)
        }.value
        #expect(!held)
        #expect(thread != loopThread)
    }

    @Test("a handler that blocks hands the loop to the standby thread", .timeLimit(.minutes(1)))
    func blockingHandlerHandsTheLoopOn() async {
        let inline = await whileInline { await blockingHandlerAttempt() }
        #expect(inline, "the handlers never started on the loop's thread")

        // The standby thread took the loop over, and the threads swapped roles: the next handler
        // again runs inline, on the thread that runs the loop now.
        let again = await whileInline {
            let after = Trace()
            await LoopActor().startHandlers(after, [{ after.note("handler") }])
            #expect(await eventually { after.has("then") })
            guard after.thread(of: "handler") == after.thread(of: "job") else { return false }
            #expect(after.names == ["job", "job ends", "handler", "then"])
            return true
        }
        #expect(again, "no handler ran inline after the takeover")
    }

    /// One attempt of `blockingHandlerHandsTheLoopOn`; false (nothing checked) if the blocker did
    /// not start on the loop's thread.
    private func blockingHandlerAttempt() async -> Bool {
        let trace = Trace()
        let loop = LoopActor()
        let release = Atomic(false)
        let takeoversBefore = EventLoop.shared.takeoverCount
        let blocker: @Sendable () -> Void = {
            trace.note("blocker")
            // Blocks its thread (at most 20 s, so that a failure cannot hang the suite).
            for _ in 0..<20_000 where !release.load(ordering: .acquiring) { usleep(1_000) }
            trace.note("blocker returns")
        }
        await loop.startHandlers(trace, [blocker, { trace.note("second") }])
        // While the first handler blocks the thread that ran the job, the work that follows the
        // handlers, the handler queued behind it and a new job on the loop all run.
        Task { if await loop.ping() { trace.note("ping") } }
        let served = await eventually { trace.has("then") && trace.has("second") && trace.has("ping") }
        let heldUp = !trace.has("blocker returns")
        release.store(true, ordering: .releasing)
        #expect(await eventually { trace.has("blocker returns") })
        guard trace.thread(of: "blocker") == trace.thread(of: "job") else { return false }
        #expect(served, "\(trace.names)")
        #expect(heldUp)
        #expect(trace.thread(of: "second") != trace.thread(of: "blocker"))
        // Nothing but a takeover lets the queued handler and the loop's job run meanwhile.
        #expect(EventLoop.shared.takeoverCount > takeoversBefore)
        return true
    }

    @Test(
        "a task cancelled by user code on the loop runs onCancel, then resumes, on the loop's thread",
        .timeLimit(.minutes(1)))
    func cancelOnTheLoop() async {
        let loop = LoopActor()
        let inline = await whileInline {
            let trace = Trace()
            let parked = Mutex<CheckedContinuation<Void, Never>?>(nil)
            let handler = Task(executorPreference: HandlerExecutor.shared) {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in parked.withLock { $0 = continuation } }
                    trace.note("resumed")
                } onCancel: {
                    trace.note("onCancel")
                    parked.withLock { $0?.resume() }
                }
            }
            #expect(await eventually { parked.withLock { $0 != nil } })
            await loop.runUserCode(trace) { handler.cancel() }
            #expect(await eventually { trace.has("resumed") })
            guard !trace.has("elsewhere") else { return false }
            #expect(trace.names == ["job", "job ends", "onCancel", "resumed"])
            // No other thread was woken: the job's thread left the loop to run both.
            #expect(trace.thread(of: "onCancel") == trace.thread(of: "job"))
            #expect(trace.thread(of: "resumed") == trace.thread(of: "job"))
            return true
        }
        #expect(inline, "the cancel's user code never ran on the loop's thread")
        #expect(await loop.ping())
    }

    @Test("user code goes elsewhere off the loop, and while a thread is stuck in user code", .timeLimit(.minutes(1)))
    func userCodeGoesElsewhere() async {
        let offLoop = Trace()
        EventLoop.shared.runUserCode({ offLoop.note("body") }) { body in
            offLoop.note("elsewhere")
            body()
        }
        #expect(offLoop.names == ["elsewhere", "body"])

        let loop = LoopActor()
        let blocked = await whileInline {
            let trace = Trace()
            let release = Atomic(false)
            defer { release.store(true, ordering: .releasing) }
            await loop.startHandlers(
                trace,
                [
                    {
                        trace.note("blocker")
                        for _ in 0..<20_000 where !release.load(ordering: .acquiring) { usleep(1_000) }
                    }
                ])
            // The standby thread took the loop over; no thread stands by while the blocker runs.
            #expect(await eventually { trace.has("then") && trace.has("blocker") })
            guard trace.thread(of: "blocker") == trace.thread(of: "job") else { return false }
            let stuck = Trace()
            await loop.runUserCode(stuck) { stuck.note("body") }
            #expect(await eventually { stuck.has("body") })
            #expect(stuck.names.prefix(2) == ["job", "job ends"])
            #expect(stuck.has("elsewhere"))
            #expect(stuck.thread(of: "body") != trace.thread(of: "blocker"))
            #expect(stuck.thread(of: "body") != stuck.thread(of: "job"))
            return true
        }
        #expect(blocked, "the blocker never started on the loop's thread")
        // Once the blocker's thread stands by again, user code runs on the loop's thread again.
        var inline = false
        for _ in 0..<1_000 where !inline {
            let after = Trace()
            await loop.runUserCode(after) { after.note("body") }
            _ = await eventually { after.has("body") }
            inline = !after.has("elsewhere") && after.thread(of: "body") == after.thread(of: "job")
            if !inline { try? await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(inline)
    }
}
