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
///   system call; one enqueued from another thread wakes the loop through an eventfd. Jobs must not
///   block either: blocking work goes to `Thread`, user code to the global concurrent executor.
public final class EventLoop: SerialExecutor, TaskExecutor, Sendable {
    public static let shared = EventLoop()

    /// epoll event bits.
    public static let readable = UInt32(EPOLLIN.rawValue)
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
    /// The loop thread's `pthread_t` once it runs (0 before).
    private let thread = Atomic<UInt>(0)

    private init() {
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epfd >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
        wakeFD = taskd_eventfd()
        precondition(wakeFD >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
        precondition(taskd_epoll_ctl(epfd, EPOLL_CTL_ADD, wakeFD, Self.readable, Self.wakeToken) == 0)
        Thread.detach { [self] in run() }
    }

    /// True on the loop's own thread.
    public var isCurrent: Bool { thread.load(ordering: .acquiring) == UInt(pthread_self()) }

    private func run() {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        var tokens = [UInt64](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        var batch: [UnownedJob] = []
        var later: [@Sendable () -> Void] = []
        while true {
            let pending = jobs.withLock { !$0.isEmpty }
            let n = taskd_epoll_wait(epfd, &tokens, &events, 64, pending ? 0 : -1)
            for i in 0..<max(0, Int(n)) {
                guard tokens[i] != Self.wakeToken else {
                    var count: UInt64 = 0
                    _ = read(wakeFD, &count, 8)
                    continue
                }
                let handler = handlers.withLock { $0[tokens[i]] }
                handler?(events[i])
            }
            // Jobs enqueue jobs (a resumed task, a hop to the actor): run rounds of them until none
            // is left, but give fd events a turn after `maxRounds`.
            for _ in 0..<Self.maxRounds {
                jobs.withLock { swap(&$0, &batch) }
                if batch.isEmpty { break }
                for job in batch {
                    job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
                }
                batch.removeAll(keepingCapacity: true)
            }
            deferred.withLock { swap(&$0, &later) }
            for body in later { body() }
            later.removeAll(keepingCapacity: true)
        }
    }

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
        // The loop drains its queue before it next waits; only another thread must wake it.
        if first && !isCurrent {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor { UnownedTaskExecutor(ordinary: self) }

    public func checkIsolated() {
        precondition(isCurrent, "expected to run on taskd's event loop thread")
    }
}
