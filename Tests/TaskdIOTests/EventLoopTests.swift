import Synchronization
import Testing

@testable import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// An actor that runs on the event loop, as the daemon's scheduler does.
private actor OnLoop {
    nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }
    private(set) var log: [String] = []

    func note(_ entry: String) { log.append(entry) }

    func isOnLoop() -> Bool { EventLoop.shared.isCurrent }

    /// Notes `entry` from the loop's thread outside any job of the actor (an fd handler).
    nonisolated func noteOnLoop(_ entry: String) { assumeIsolated { $0.log.append(entry) } }

    /// Queues a task on the loop and an `afterTurn` body from one job; reports the order they ran in.
    func orderWithinATurn() async -> [String] {
        let done = AsyncStream.makeStream(of: Void.self)
        Task(executorPreference: EventLoop.shared) { await self.note("queued job") }
        EventLoop.shared.afterTurn {
            Task(executorPreference: EventLoop.shared) {
                await self.note("after the turn")
                done.continuation.finish()
            }
        }
        for await _ in done.stream {}
        return log
    }
}

/// What ran, in order.
private final class Log: Sendable {
    let entries = Mutex<[String]>([])

    func note(_ entry: String) { entries.withLock { $0.append(entry) } }
}

@Suite("Event loop executor")
struct EventLoopTests {
    @Test("an actor on the loop runs on its thread, whoever calls it")
    func actorRunsOnTheLoop() async {
        let actor = OnLoop()
        #expect(await actor.isOnLoop())
        // From a detached task on the global pool: the job is enqueued from another thread, and
        // the eventfd wakes the loop out of epoll_wait.
        let fromPool = await Task.detached { await actor.isOnLoop() }.value
        #expect(fromPool)
        #expect(!EventLoop.shared.isCurrent)
    }

    @Test(
        "an fd handler, outside any job, may assume the isolation of an actor on the loop; other threads are told no",
        .timeLimit(.minutes(1)))
    func assumeIsolatedFromAnFdHandler() async throws {
        let actor = OnLoop()
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd); close(writeEnd) }
        let (seen, seenContinuation) = AsyncStream.makeStream(of: Bool.self)
        let token = try #require(
            EventLoop.shared.register(fd: readEnd, events: EventLoop.readable) { _ in
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
                seenContinuation.yield(EventLoop.shared.isIsolatingCurrentContext() == true)
                actor.noteOnLoop("from an fd handler")
                seenContinuation.finish()
            })
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        var answers: [Bool] = []
        for await answer in seen { answers.append(answer) }
        EventLoop.shared.deregister(fd: readEnd, token: token)
        #expect(answers == [true])
        #expect(await actor.log == ["from an fd handler"])
        #expect(EventLoop.shared.isIsolatingCurrentContext() == false)
    }

    @Test("a task preferring the loop runs nonisolated code there; user code can leave for the pool")
    func taskExecutorPreference() async {
        let onLoop = await Task(executorPreference: EventLoop.shared) { EventLoop.shared.isCurrent }.value
        #expect(onLoop)
        let handler = await Task(executorPreference: EventLoop.shared) {
            await Task(executorPreference: globalConcurrentExecutor) { EventLoop.shared.isCurrent }.value
        }.value
        #expect(!handler)
    }

    @Test("afterTurn runs after the jobs the turn queued; off the loop it runs at once")
    func afterTurnOrder() async {
        #expect(await OnLoop().orderWithinATurn() == ["queued job", "after the turn"])
        let ran = Mutex(false)
        EventLoop.shared.afterTurn { ran.withLock { $0 = true } }
        #expect(ran.withLock { $0 })
    }

    @Test("yieldOncePerTurn yields once in a turn of the loop, again in a later turn, and never off the loop")
    func yieldOncePerTurn() async {
        let loop = EventLoop.shared
        #expect(!loop.yieldOncePerTurn())
        // In one job: the first call yields unless the turn did already, the second never does.
        // (Other suites' daemons may yield in a turn too: hence "unless", and several turns.)
        let freshTurns = Mutex(0)
        for _ in 0..<5 {
            let (first, second, before) = await withCheckedContinuation { done in
                // A job queued by the end of a turn runs in the next one.
                Task(executorPreference: loop) {
                    loop.afterTurn {
                        Task(executorPreference: loop) {
                            let before = loop.hasYieldedThisTurn
                            let first = loop.yieldOncePerTurn()
                            let second = loop.yieldOncePerTurn()
                            done.resume(returning: (first, second, before))
                        }
                    }
                }
            }
            #expect(first == !before)
            #expect(!second)
            if !before { freshTurns.withLock { $0 += 1 } }
        }
        #expect(freshTurns.withLock { $0 } >= 2)
    }

    @Test("fd events ready together are served in one turn, each after the handlers the one before started")
    func readyEventsShareATurn() async {
        let loop = EventLoop.shared
        var a: [Int32] = [0, 0]
        var b: [Int32] = [0, 0]
        #expect(pipe(&a) == 0 && pipe(&b) == 0)
        var byte: UInt8 = 1
        #expect(write(a[1], &byte, 1) == 1 && write(b[1], &byte, 1) == 1)
        let log = Log()
        let done = AsyncStream.makeStream(of: Void.self)
        let serve: @Sendable (Int32) -> @Sendable (UInt32) -> Void = { fd in
            { _ in
                var byte: UInt8 = 0
                _ = read(fd, &byte, 1)
                let first = log.entries.withLock { entries in
                    entries.append(entries.isEmpty ? "first fd" : "second fd")
                    return entries.count == 1
                }
                guard first else { return }
                Task(executorPreference: HandlerExecutor.shared) { log.note("handler") }
                loop.afterTurn {
                    log.note("after the turn")
                    done.continuation.finish()
                }
            }
        }
        // Registered by one job on the loop, so that its next epoll_wait reports both.
        let readEnds = [a[0], b[0]]
        let tokens = await Task(executorPreference: loop) {
            readEnds.compactMap { fd in loop.register(fd: fd, events: EventLoop.readable, handler: serve(fd)) }
        }.value
        for await _ in done.stream {}
        for (fd, token) in zip(readEnds, tokens) { loop.deregister(fd: fd, token: token) }
        for fd in a + b { close(fd) }
        #expect(tokens.count == 2)
        #expect(log.entries.withLock { $0 } == ["first fd", "handler", "second fd", "after the turn"])
    }

    @Test("fd events are served while jobs keep the loop busy", .timeLimit(.minutes(1)))
    func fdEventsBetweenJobs() async {
        // A task that re-enqueues itself forever would starve fds if the loop drained jobs until none is left.
        let stop = Atomic(false)
        let spinner = Task(executorPreference: EventLoop.shared) {
            while !stop.load(ordering: .relaxed) { await Task.yield() }
        }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let readEnd = fds[0]
        let (events, continuation) = AsyncStream.makeStream(of: Void.self)
        let token = EventLoop.shared.register(fd: readEnd, events: EventLoop.readable) { _ in
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            continuation.yield()
        }
        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1)
        for await _ in events { break }
        stop.store(true, ordering: .relaxed)
        await spinner.value
        if let token { EventLoop.shared.deregister(fd: fds[0], token: token) }
        close(fds[0])
        close(fds[1])
        #expect(token != nil)
    }
}
