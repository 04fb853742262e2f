import CTaskdShim
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One dedicated thread waiting in `epoll_wait` for every fd taskd watches (handler pipes, pidfds,
/// client sockets, timers) and running the jobs of the actors and tasks that execute on it.
///
/// - As an fd watcher: handlers run on the loop's thread, so they must not block. It replaces
///   Dispatch read sources, whose epoll bookkeeping on Linux can crash under fast setup and
///   teardown (swift-corelibs-libdispatch#949). Tokens are never reused, so an event for an fd
///   that was just deregistered is dropped, not delivered to whatever reuses the fd number.
/// - As an executor: a `SerialExecutor` for an actor that must react to I/O without a thread
///   hand-off (the daemon's scheduler), and a `TaskExecutor` for tasks that serve connections.
///   A job enqueued from the loop's own thread runs after the current batch of fd events, with no
///   system call; one enqueued from another thread wakes the loop through an eventfd, unless no
///   thread holds the loop (handler jobs run), since whichever takes it next looks at the jobs first.
///   The fd events an `epoll_wait` returns are all served in one turn, each after the handlers the
///   one before started; the turn's jobs and `afterTurn` work follow. Jobs must not
///   block either: blocking work goes to `Thread`.
/// - For user code: a `HandlerExecutor` job (a Swift handler's first slice) that an fd handler or a
///   job of the loop enqueues runs on the loop's thread as soon as that returns, before any other
///   event or job, so a handler starts without waking another CPU. While it runs, the loop is free:
///   if it takes longer than `stallLimit`, a standby thread takes the loop over (the two threads
///   swap roles), so user code holds the loop up by at most that.
public final class EventLoop: SerialExecutor, TaskExecutor, Sendable {
    public static let shared = EventLoop()

    /// epoll event bits.
    public static let readable = UInt32(EPOLLIN.rawValue)
    /// A sysfs/cgroupfs file changed (`cgroup.events`): the kernel raises EPOLLPRI on it.
    public static let priority = UInt32(EPOLLPRI.rawValue)
    public static let writable = UInt32(EPOLLOUT.rawValue)
    public static let hangup = UInt32(EPOLLHUP.rawValue) | UInt32(EPOLLERR.rawValue)

    /// The token of the eventfd that wakes the loop for jobs; registrations start at 1.
    private static let wakeToken: UInt64 = 0
    /// Rounds of jobs run between two looks at the fds.
    private static let maxRounds = 64

    private let epfd: Int32
    private let wakeFD: Int32
    private let handlers = Mutex<[UInt64: @Sendable (UInt32) -> Void]>([:])
    private let nextToken = Atomic<UInt64>(1)
    private let jobs = Mutex<[UnownedJob]>([])
    /// `afterTurn` work, touched on the loop's thread only.
    private let deferred = Mutex<[@Sendable () -> Void]>([])
    /// The loop's thread and its standby (`pthread_t`s), and how often one of them wrote the
    /// eventfd (for tests: it never needs to while it runs handler jobs on a loop left vacant).
    private let ownThreads = Mutex<[UInt]>([])
    private let ownWakes = Atomic<Int>(0)
    /// How often the standby thread took the loop over (for tests).
    private let takeovers = Atomic<Int>(0)
    /// Whether the current turn gave its CPU up already (`yieldOncePerTurn`).
    private let yielded = Atomic<Bool>(false)
    /// The `pthread_t` of the thread that runs the loop (0 while none does).
    private let thread = Atomic<UInt>(0)
    /// Who runs the loop and whether the standby thread waits to take it over.
    private let roles = Mutex(Roles())
    /// `HandlerExecutor` jobs and `runUserCode` calls queued on the loop, and the work to run once
    /// they have started.
    private let handoff = Mutex(Handoff())
    /// The thread running a `runUserCode` call (0 while none does): the `HandlerExecutor` jobs it
    /// enqueues run after it, on the same thread.
    private let userCodeThread = Atomic<UInt>(0)
    /// Expires `stallLimit` after the loop's thread left it to run handler jobs; the standby
    /// thread waits for it and then takes the loop over.
    private let stallFD: Int32

    /// How long handler jobs may hold the loop's thread before the standby thread takes the loop.
    /// Longer than the kernel's tick (4 ms at HZ=250), so that arming it rarely makes it the CPU's
    /// earliest timer: reprogramming the timer hardware is a VM exit, and at 1 ms arming it took
    /// 12–15 µs of every handler's start here against 4.5 µs at 5 ms (bench/PROFILING.md's git history).
    public static let stallLimit: UInt64 = 5_000  // µs

    private struct Roles {
        /// A thread runs the loop (false while its thread runs handler jobs).
        var held = true
        /// The standby thread exists and waits on `stallFD`.
        var standbyWaiting = false
        /// A standby thread was made (at the first handler job).
        var standbyStarted = false
    }

    private struct Handoff {
        var jobs: [HandlerWork] = []
        var then: [@Sendable () -> Void] = []
        var isEmpty: Bool { jobs.isEmpty && then.isEmpty }
    }

    /// User code waiting for the loop's thread: a `HandlerExecutor` job, or a `runUserCode` call with
    /// where it goes should the queue be forwarded.
    private enum HandlerWork {
        case job(UnownedJob)
        case call(@Sendable () -> Void, elsewhere: @Sendable (@escaping @Sendable () -> Void) -> Void)
    }

    private init() {
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epfd >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
        wakeFD = taskd_eventfd()
        precondition(wakeFD >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
        precondition(taskd_epoll_ctl(epfd, EPOLL_CTL_ADD, wakeFD, Self.readable, Self.wakeToken) == 0)
        stallFD = taskd_monotonic_timer()
        precondition(stallFD >= 0, "timerfd failed: \(String(cString: strerror(errno)))")
        let started = Thread.detach { [self] in
            ownThreads.withLock { $0.append(UInt(pthread_self())) }
            while true {
                lead()
                standBy()
            }
        }
        precondition(started, "the event loop's thread could not be started")
    }

    /// True on the thread that runs the loop (it runs the loop's fd handlers and jobs).
    public var isCurrent: Bool { thread.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Runs the loop on this thread until the standby thread takes it over.
    private func lead() {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        var tokens = [UInt64](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        var batch: [UnownedJob] = []
        var later: [@Sendable () -> Void] = []
        // What the previous holder left: the work that was to follow its handler jobs.
        guard runHandoff() else { return }
        while true {
            let pending = jobs.withLock { !$0.isEmpty } || handoff.withLock { !$0.isEmpty }
            let n = taskd_epoll_wait(epfd, &tokens, &events, 64, pending ? 0 : -1)
            yielded.store(false, ordering: .relaxed)
            for i in 0..<max(0, Int(n)) {
                guard tokens[i] != Self.wakeToken else {
                    var count: UInt64 = 0
                    _ = read(wakeFD, &count, 8)
                    continue
                }
                let handler = handlers.withLock { $0[tokens[i]] }
                handler?(events[i])
                // Handlers it started go first, then the batch's next event (fd handlers cope with
                // an event made stale meanwhile: every fd is non-blocking, and a token deregistered
                // meanwhile finds no handler). Ready requests of many clients are served in one turn:
                // one `epoll_wait`, and one wake-up of the writers (`afterTurn`) for all of them.
                guard runHandoff() else { return }
            }
            guard runHandoff() else { return }
            // Jobs enqueue jobs (a resumed task, a hop to the actor): run rounds of them until none
            // is left, but give fd events a turn after `maxRounds`.
            for _ in 0..<Self.maxRounds {
                jobs.withLock { swap(&$0, &batch) }
                if batch.isEmpty { break }
                var next = 0
                while next < batch.count {
                    batch[next].runSynchronously(
                        isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
                    next += 1
                    // Handlers the job started go first; the jobs left go back to the queue's head.
                    guard handoff.withLock({ !$0.isEmpty }) else { continue }
                    let left = batch[next...]
                    if !left.isEmpty { jobs.withLock { $0.insert(contentsOf: left, at: 0) } }
                    break
                }
                batch.removeAll(keepingCapacity: true)
                guard runHandoff() else { return }
            }
            deferred.withLock { swap(&$0, &later) }
            for body in later { body() }
            later.removeAll(keepingCapacity: true)
        }
    }

    /// Runs the queued handler jobs, then the work queued to follow them, until neither is left;
    /// false if the standby thread took the loop over meanwhile.
    private func runHandoff() -> Bool {
        while true {
            guard runHandlerJobs() else { return false }
            let then = handoff.withLock { handoff in
                defer { handoff.then.removeAll() }
                return handoff.then
            }
            if then.isEmpty { return true }
            for body in then { body() }
        }
    }

    /// Runs the queued handler jobs on this thread, with the loop left to the standby thread
    /// should they take longer than `stallLimit`; false if it took the loop meanwhile.
    private func runHandlerJobs() -> Bool {
        guard handoff.withLock({ !$0.jobs.isEmpty }) else { return true }
        let release = roles.withLock { roles in
            if !roles.standbyStarted {
                // Without a thread (none could be made), handler jobs go to the global executor.
                roles.standbyStarted = Thread.detach { [self] in
                    ownThreads.withLock { $0.append(UInt(pthread_self())) }
                    while true {
                        standBy()
                        lead()
                    }
                }
                roles.standbyWaiting = roles.standbyStarted
            }
            guard roles.standbyWaiting else { return false }
            roles.held = false
            return true
        }
        // The standby thread runs the loop: this one is stuck in an earlier handler job.
        guard release else {
            forwardHandlerJobs()
            return true
        }
        thread.store(0, ordering: .releasing)
        _ = taskd_monotonic_timer_arm(stallFD, DeadlineTimer.now() + Self.stallLimit)
        while let work = handoff.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
            switch work {
            case .job(let job):
                job.runSynchronously(on: HandlerExecutor.shared.asUnownedTaskExecutor())
            case .call(let body, _):
                userCodeThread.store(UInt(pthread_self()), ordering: .releasing)
                body()
                userCodeThread.store(0, ordering: .releasing)
            }
        }
        _ = taskd_monotonic_timer_arm(stallFD, 0)
        let kept = roles.withLock { roles in
            guard !roles.held else {
                roles.standbyWaiting = true
                return false
            }
            roles.held = true
            return true
        }
        if kept { thread.store(UInt(pthread_self()), ordering: .releasing) }
        return kept
    }

    /// Waits until the thread that runs the loop has left it to handler jobs for `stallLimit`,
    /// then takes the loop over.
    private func standBy() {
        var pfd = pollfd(fd: stallFD, events: Int16(POLLIN), revents: 0)
        while true {
            guard poll(&pfd, 1, -1) == 1 else { continue }
            var expirations: UInt64 = 0
            guard read(stallFD, &expirations, 8) == 8 else { continue }  // disarmed meanwhile
            let taken = roles.withLock { roles in
                guard !roles.held else { return false }
                roles.held = true
                roles.standbyWaiting = false
                return true
            }
            guard taken else { continue }
            takeovers.add(1, ordering: .relaxed)
            // The jobs the stuck thread has not started yet must not wait for it.
            forwardHandlerJobs()
            return
        }
    }

    /// Sends the queued handler jobs to the global concurrent executor, and `runUserCode` calls
    /// to where each asked.
    private func forwardHandlerJobs() {
        var moved: [HandlerWork] = []
        handoff.withLock { swap(&$0.jobs, &moved) }
        for work in moved {
            switch work {
            case .job(let job): globalConcurrentExecutor.enqueue(ExecutorJob(job))
            case .call(let body, let elsewhere): elsewhere(body)
            }
        }
    }

    /// Queues a `HandlerExecutor` job: to run on the loop's thread once the fd handler or job that
    /// enqueued it returns when enqueued by the loop (or by a `runUserCode` call, after it), else on
    /// the global concurrent executor.
    func enqueueHandlerJob(_ job: consuming ExecutorJob) {
        guard isCurrent || userCodeThread.load(ordering: .acquiring) == UInt(pthread_self()) else {
            return globalConcurrentExecutor.enqueue(job)
        }
        let job = UnownedJob(job)
        handoff.withLock { $0.jobs.append(.job(job)) }
    }

    /// Runs `body`, user code that may block (a Swift handler's `onCancel`, run by cancelling its
    /// task), as handler jobs run: on the loop's thread once the fd handler or job that called this
    /// returns, the loop left to the standby thread should it take longer than `stallLimit`. The
    /// `HandlerExecutor` jobs it enqueues (the cancelled task resuming) run after it on that thread,
    /// so no other thread is woken. Called off the loop, or should the queue be forwarded because a
    /// thread is stuck in user code already, `body` goes to `elsewhere`, which must not block the loop
    /// or the cooperative pool with it.
    public func runUserCode(
        _ body: @escaping @Sendable () -> Void,
        elsewhere: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        guard isCurrent else { return elsewhere(body) }
        handoff.withLock { $0.jobs.append(.call(body, elsewhere: elsewhere)) }
    }

    /// Runs `body` on the loop once the handler jobs queued so far have started, before any other
    /// fd event or job; at once when called off the loop. For work a turn leaves until its
    /// handlers run, such as re-arming the timers that started them.
    public func afterHandlerJobs(_ body: @escaping @Sendable () -> Void) {
        guard isCurrent else { return body() }
        handoff.withLock { $0.then.append(body) }
    }

    /// Gives the CPU up once per turn of the loop (`sched_yield`), when called on the loop's thread;
    /// does nothing elsewhere. For a spawn: the exec'd child starts on this CPU, and this thread,
    /// woken by its exec, would otherwise run the rest of the turn first while the other CPU may
    /// idle. Once per turn, so that a burst of spawns is not slowed by a yield after each.
    /// Returns whether it yielded.
    @discardableResult
    public func yieldOncePerTurn() -> Bool {
        guard isCurrent, !yielded.exchange(true, ordering: .relaxed) else { return false }
        sched_yield()
        return true
    }

    /// How often the loop's own threads woke the loop through its eventfd (for tests).
    var ownThreadWakes: Int { ownWakes.load(ordering: .relaxed) }

    /// How often the standby thread took the loop over from a thread stuck in handler jobs (for tests).
    var takeoverCount: Int { takeovers.load(ordering: .relaxed) }

    /// Whether handler jobs queued now would run on the loop's thread: no thread is stuck in earlier
    /// ones, so a standby waits (or will be made) to take the loop over (for tests).
    var runsHandlerJobsInline: Bool { roles.withLock { $0.standbyWaiting || !$0.standbyStarted } }

    /// Whether no thread runs the loop, its thread running handler jobs (for tests).
    var isVacant: Bool { roles.withLock { !$0.held } }

    /// Whether this turn of the loop yielded already (for tests).
    var hasYieldedThisTurn: Bool { yielded.load(ordering: .relaxed) }

    /// Runs `body` at the end of the loop's current turn, once the jobs it queued have run; at once
    /// when called off the loop. For work that must not delay what the turn started, such as
    /// waking a writer thread that would compete with a handler for the CPU.
    public func afterTurn(_ body: @escaping @Sendable () -> Void) {
        guard isCurrent else { return body() }
        deferred.withLock { $0.append(body) }
    }

    // MARK: Watching fds

    /// Watches `fd` for `events` (level-triggered); returns the token that names the registration.
    public func register(fd: Int32, events: UInt32, handler: @escaping @Sendable (UInt32) -> Void) -> UInt64? {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).oldValue
        handlers.withLock { $0[token] = handler }
        guard taskd_epoll_ctl(epfd, EPOLL_CTL_ADD, fd, events, token) == 0 else {
            _ = handlers.withLock { $0.removeValue(forKey: token) }
            return nil
        }
        return token
    }

    /// Changes the events a registration waits for.
    public func modify(fd: Int32, token: UInt64, events: UInt32) {
        _ = taskd_epoll_ctl(epfd, EPOLL_CTL_MOD, fd, events, token)
    }

    /// Stops watching `fd`; no handler call for `token` starts after this returns. Close the fd after.
    public func deregister(fd: Int32, token: UInt64) {
        _ = handlers.withLock { $0.removeValue(forKey: token) }
        _ = taskd_epoll_ctl(epfd, EPOLL_CTL_DEL, fd, 0, 0)
    }

    // MARK: Executing jobs

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let first = jobs.withLock { queue in
            queue.append(job)
            return queue.count == 1
        }
        // The loop drains its queue before it next waits: only a thread that runs it may be
        // blocked in `epoll_wait`. None does while the loop is left to handler jobs, and whichever
        // thread takes it next looks at the queue first (the job was queued before `roles` was read).
        if first && !isCurrent && roles.withLock({ $0.held }) {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
            if ownThreads.withLock({ $0.contains(UInt(pthread_self())) }) { ownWakes.add(1, ordering: .relaxed) }
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor { UnownedTaskExecutor(ordinary: self) }

    public func checkIsolated() {
        precondition(isCurrent, "expected to run on taskd's event loop thread")
    }

    /// Whether the calling thread holds the loop: what `assumeIsolated` asks of an actor on this
    /// executor when no job of the loop runs (an fd handler, a deferred body). Never unknown.
    public func isIsolatingCurrentContext() -> Bool? { isCurrent }
}
