import CTaskdShim
import Synchronization
import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// A running command handler: spawned with `posix_spawn` as the leader of its own process group,
/// with every signal disposition reset and the mask cleared, the payload on standard input,
/// standard output and error captured line by line, and fd 3 a pipe for its notifications
/// (`PROGRESS=`, `STATUS=`). Its exit is observed through a pidfd on the
/// event loop, so no thread blocks in `waitpid`. Given a cgroup, it enters it before it execs:
/// signals and the kill then reach every process of the run, and it has ended once the cgroup is
/// empty.
public final class CommandProcess: Sendable {
    /// The leader's pid, which is also the process group id.
    public let pid: pid_t
    /// The run's cgroup, if it has one.
    public let cgroup: RunCgroup?
    /// The run keeper, its parent, if the keeper spawned it (else taskd is).
    let keeper: RunKeeper?
    /// Whether the run keeper is its parent.
    public var isKept: Bool { keeper != nil }
    /// With `keeper`, how the keeper journals the output (nil: taskd reads the pipes itself).
    let keptOutput: KeptOutput?
    let state: Mutex<State>
    let onOutput: @Sendable (CommandOutput) -> Void
    private let onExit: @Sendable (Termination, RunUsage) -> Void

    struct State: Sendable {
        var exited = false
        /// The leader's wait status, once reaped.
        var waitStatus: Int32?
        /// True once handed to the next image (`handOff`): nothing more is reported from here.
        var handedOff = false
        /// The pidfd watched for the leader's exit, and its event-loop token.
        var exitWatch: (fd: Int32, token: UInt64)?
        /// The open pipe read ends, each with its line splitter.
        var splitters: [Int32: LineSplitter] = [:]
        /// The event-loop tokens of the open pipes still watched (none after SIGKILL: see `signalGroup`).
        var watched: [Int32: UInt64] = [:]
        /// One meter for both streams: the limit is per run.
        var limiter: OutputRateLimiter
        /// The output pipes the keeper journals (`keptOutput`), instead of `splitters`.
        var kept: [Int32: KeptPipe] = [:]
        /// What the exit does once the kept pipes are closed (their last lines written).
        var afterKept: (@Sendable () -> Void)?
    }

    /// Starts `argv` with exactly `environment` (`NAME=value`) as `identity`; `onOutput` gets each
    /// line (or a count of lines `outputLimit` dropped), then `onExit` gets the termination once the
    /// leader has exited and its output is drained. With `keeper`, the keeper spawns it (as run
    /// `runID`, keeping `snapshot` with it for the next taskd) and, given `keptOutput`, journals its
    /// output lines (`onOutput` then gets only notifications).
    public static func spawn(
        argv: [String], environment: [String], workingDirectory: String?, stdin payload: String?,
        identity: ExecIdentity = ExecIdentity(), outputLimit: OutputRateLimit = .off, cgroup: RunCgroup? = nil,
        keeper: RunKeeper? = nil, runID: String = "", snapshot: [UInt8] = [], keptOutput: KeptOutput? = nil,
        onOutput: @escaping @Sendable (CommandOutput) -> Void,
        onExit: @escaping @Sendable (Termination, RunUsage) -> Void
    ) throws(SpawnError) -> CommandProcess {
        guard let program = argv.first else { throw SpawnError(message: "empty command line") }
        let path = try resolve(program, environment: environment)

        let stdinFD = try stdinDescriptor(payload)
        defer { if stdinFD != devNull { close(stdinFD) } }
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        var notifyPipe: [Int32] = [-1, -1]
        guard taskd_pipe_cloexec(&outPipe) == 0, taskd_pipe_cloexec(&errPipe) == 0,
            taskd_pipe_cloexec(&notifyPipe) == 0
        else {
            for fd in outPipe + errPipe + notifyPipe where fd >= 0 { close(fd) }
            throw SpawnError(message: "pipe: \(String(cString: strerror(errno)))")
        }
        let started = CStringArray.with(argv) { cArgv in
            CStringArray.with(environment) { cEnv -> Result<pid_t, SpawnError> in
                if let keeper {
                    return keeperSpawn(
                        keeper, runID: runID, path, cArgv, cEnv,
                        fds: [stdinFD, outPipe[1], errPipe[1], notifyPipe[1], outPipe[0], errPipe[0], notifyPipe[0]],
                        cwd: workingDirectory, identity: identity, cgroupFD: cgroup?.procsFD, snapshot: snapshot)
                }
                if identity.isInherited && cgroup == nil {
                    return posixSpawn(
                        path, cArgv, cEnv, stdin: stdinFD, stdout: outPipe[1], stderr: errPipe[1],
                        notify: notifyPipe[1], cwd: workingDirectory)
                }
                return forkExec(
                    path, cArgv, cEnv, stdin: stdinFD, stdout: outPipe[1], stderr: errPipe[1], notify: notifyPipe[1],
                    cwd: workingDirectory, identity: identity, cgroupFD: cgroup?.procsFD)
            }
        }
        close(outPipe[1])
        close(errPipe[1])
        close(notifyPipe[1])
        switch started {
        case .success(let pid):
            // The child's `main` first, then the rest of the loop's turn (wake → command's main:
            // 1.21–1.34× the C floor before, 1.05–1.13× after; tenth round in bench/PROFILING.md's git history).
            EventLoop.shared.yieldOncePerTurn()
            let process = CommandProcess(
                pid: pid, cgroup: cgroup, keeper: keeper, keptOutput: keptOutput, outputLimit: outputLimit,
                onOutput: onOutput, onExit: onExit)
            process.watch(pipes: [(outPipe[0], .stdout, []), (errPipe[0], .stderr, []), (notifyPipe[0], .notify, [])])
            return process
        case .failure(let error):
            close(outPipe[0])
            close(errPipe[0])
            close(notifyPipe[0])
            throw error
        }
    }

    private init(
        pid: pid_t, cgroup: RunCgroup?, keeper: RunKeeper?, keptOutput: KeptOutput?, outputLimit: OutputRateLimit,
        onOutput: @escaping @Sendable (CommandOutput) -> Void,
        onExit: @escaping @Sendable (Termination, RunUsage) -> Void
    ) {
        self.pid = pid
        self.cgroup = cgroup
        self.keeper = keeper
        self.keptOutput = keeper?.writesOutput == true ? keptOutput : nil
        self.onOutput = onOutput
        self.onExit = onExit
        self.state = Mutex(State(limiter: OutputRateLimiter(outputLimit)))
    }

    /// Takes over a command an earlier image of taskd started (`handOff` there, then `execve`): it
    /// is watched as if spawned here; its rate limit's window starts again. A run the keeper holds
    /// (`handoff.kept`, after an upgrade or a crash) has its exit reported by `keeper`.
    public static func adopt(
        _ handoff: CommandHandoff, outputLimit: OutputRateLimit = .off, cgroup: RunCgroup? = nil,
        keeper: RunKeeper? = nil, keptOutput: KeptOutput? = nil,
        onOutput: @escaping @Sendable (CommandOutput) -> Void,
        onExit: @escaping @Sendable (Termination, RunUsage) -> Void
    ) -> CommandProcess {
        let kept = handoff.kept == true ? keeper : nil
        let process = CommandProcess(
            pid: handoff.pid, cgroup: cgroup, keeper: kept, keptOutput: keptOutput, outputLimit: outputLimit,
            onOutput: onOutput, onExit: onExit)
        for pipe in handoff.pipes { _ = fcntl(pipe.fd, F_SETFD, FD_CLOEXEC) }
        process.watch(
            pipes: handoff.pipes.map { ($0.fd, $0.stream, $0.unfinished) }, reaped: handoff.waitStatus,
            usage: handoff.usage.map {
                RunUsage(
                    cpuUSec: $0.cpuUSec, ioReadBytes: $0.ioReadBytes, ioWriteBytes: $0.ioWriteBytes, source: "rusage")
            })
        return process
    }

    /// Stops watching the command, for the next image of taskd (`taskctl upgrade`): the complete
    /// lines read so far are delivered now, the rest stays in the pipes, whose read ends lose
    /// close-on-exec; returns what `adopt` needs. Nothing is reported from here afterwards.
    public func handOff() -> CommandHandoff {
        let (watched, exitWatch, status) = state.withLock { s in
            s.handedOff = true
            defer {
                s.watched = [:]
                s.exitWatch = nil
            }
            return (s.watched, s.exitWatch, s.waitStatus)
        }
        for (fd, token) in watched { EventLoop.shared.deregister(fd: fd, token: token) }
        if let exitWatch {
            EventLoop.shared.deregister(fd: exitWatch.fd, token: exitWatch.token)
            close(exitWatch.fd)
        }
        keeper?.forget(pid)
        var pipes: [CommandHandoff.Pipe] = []
        for fd in state.withLock({ $0.splitters.keys.sorted() }) {
            _ = drain(fd, onOutput: onOutput)
            guard let splitter = state.withLock({ $0.splitters.removeValue(forKey: fd) }) else { continue }
            _ = fcntl(fd, F_SETFD, 0)
            pipes.append(CommandHandoff.Pipe(fd: fd, stream: splitter.stream, unfinished: splitter.unfinished))
        }
        // A kept pipe's lines are still in it, but for what an earlier image had read (a request
        // with the keeper takes that with it: the next image's greeting waits for it).
        for (fd, pipe) in state.withLock({ s in s.kept.sorted { $0.key < $1.key } }) {
            _ = fcntl(fd, F_SETFD, 0)
            pipes.append(
                CommandHandoff.Pipe(fd: fd, stream: pipe.stream, unfinished: pipe.requested ? [] : pipe.prefix))
        }
        pipes.sort { $0.fd < $1.fd }
        return CommandHandoff(
            pid: pid, pipes: pipes, cgroup: cgroup?.path, waitStatus: status, kept: keeper != nil ? true : nil)
    }

    /// Sends `signal` to the whole process group, unless the leader has already been reaped.
    /// Before SIGKILL the pipes stop being watched: their end of file, raised while the group dies,
    /// woke the loop twice onto the dying group's CPU (two context switches per kill); what they
    /// hold is read once the leader's exit is seen, as for any exit.
    public func signalGroup(_ signal: Int32) {
        let (exited, watched) = state.withLock { s -> (Bool, [Int32: UInt64]) in
            guard !s.exited, signal == SIGKILL else { return (s.exited, [:]) }
            defer { s.watched = [:] }
            return (false, s.watched)
        }
        for (fd, token) in watched { EventLoop.shared.deregister(fd: fd, token: token) }
        if let cgroup {
            // Every process of the run, setsid or not; the kill reaches them even after the leader.
            if signal == SIGKILL { cgroup.killAll() } else { cgroup.signalAll(signal) }
            return
        }
        if !exited { kill(-pid, signal) }
    }

    /// How many of its pipes the event loop still watches (for tests).
    var watchedPipes: Int { state.withLock { $0.watched.count } }

    /// Watches the pipes (`unfinished`: the start of a line read before) and the leader's exit;
    /// `reaped`: its wait status, if it was reaped already (by an earlier image, or the keeper).
    private func watch(
        pipes: [(fd: Int32, stream: OutputLine.Stream, unfinished: [UInt8])], reaped: Int32? = nil,
        usage: RunUsage? = nil
    ) {
        let loop = EventLoop.shared
        for (fd, stream, unfinished) in pipes {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if keptOutput != nil {
                watchKept(fd, stream: stream, prefix: unfinished)
                continue
            }
            state.withLock { $0.splitters[fd] = LineSplitter(stream: stream, pending: unfinished) }
            watchDirect(fd)
        }
        if let reaped {
            let own = usage ?? Self.usage(rusage())
            Task(executorPreference: loop) { self.exited(status: reaped, own: own) }
            return
        }
        if let keeper {
            keeper.whenExited(pid) { [self] status, usage in
                guard let status else { return keeperLost() }
                exited(status: status, own: usage)
            }
            return
        }
        let pidfd = taskd_pidfd_open(pid)
        if pidfd >= 0 {
            let token = loop.register(fd: pidfd, events: EventLoop.readable) { [self] _ in
                var status: Int32 = 0
                var usage = rusage()
                guard wait4(self.pid, &status, WNOHANG, &usage) == self.pid else { return }
                if let watch = self.state.withLock({ $0.exitWatch.take() }) {
                    loop.deregister(fd: watch.fd, token: watch.token)
                    close(watch.fd)
                }
                self.exited(status: status, own: Self.usage(usage))
            }
            if let token {
                state.withLock { $0.exitWatch = (pidfd, token) }
                return
            }
            close(pidfd)
        }
        // No pidfd (old kernel): wait on a dedicated thread instead of a cooperative one.
        let pid = self.pid
        Thread.detach {
            var status: Int32 = 0
            var usage = rusage()
            while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
            self.exited(status: status, own: Self.usage(usage))
        }
    }

    /// Watches a pipe taskd reads itself (its splitter in place); closed if it cannot be watched.
    func watchDirect(_ fd: Int32) {
        let onOutput = self.onOutput
        let token = EventLoop.shared.register(fd: fd, events: EventLoop.readable) { [self] _ in
            if !self.drain(fd, onOutput: onOutput) { self.closePipe(fd) }
        }
        if let token {
            state.withLock { $0.watched[fd] = token }
        } else {
            state.withLock { _ = $0.splitters.removeValue(forKey: fd) }
            close(fd)
        }
    }

    /// `own`: what the leader used, as `wait4` said.
    private func exited(status: Int32, own: RunUsage) {
        let handedOff = state.withLock { s in
            s.exited = true
            s.waitStatus = status
            return s.handedOff
        }
        guard !handedOff else { return }
        if cgroup == nil { ProcessReaper.shared.release(group: pid) }
        // The keeper writes the kept pipes' last lines first.
        finishKept { [self] in reportExit(status: status, own: own) }
    }

    /// The exit, once the kept pipes are closed: the rest of the output, then the end.
    private func reportExit(status: Int32, own: RunUsage) {
        // Output written before the exit is delivered before the exit is reported.
        for fd in state.withLock({ $0.splitters.keys.sorted() }) {
            _ = drain(fd, onOutput: onOutput)
            closePipe(fd, onOutput: onOutput)
        }
        let dropped = state.withLock { $0.limiter.finish() }
        if dropped > 0 { onOutput(.dropped(lines: dropped)) }
        let termination = ExitStatus.termination(status)
        guard let cgroup else { return ended(termination, own) }
        // What the leader left in its cgroup is killed; the run ends once the cgroup is empty.
        if cgroup.isPopulated { cgroup.killAll() }
        cgroup.whenEmpty { [self] in
            guard !state.withLock({ $0.handedOff }) else { return }
            let usage = cgroup.usage(fallback: own)
            let oom = cgroup.oomKilled && !termination.isSuccess
            cgroup.remove { self.ended(oom ? .outOfMemory : termination, usage) }
        }
    }

    /// The keeper died before the run ended: its exit status can no longer be known. What is left
    /// of it is killed (nothing runs unwatched), and it ends `lost`.
    private func keeperLost() {
        let handedOff = state.withLock { s in
            s.exited = true
            return s.handedOff
        }
        guard !handedOff else { return }
        if let cgroup { cgroup.killAll() } else { kill(-pid, SIGKILL) }
        for fd in state.withLock({ s in s.kept.keys.sorted() }) { takeOverKept(fd) }
        for fd in state.withLock({ $0.splitters.keys.sorted() }) {
            _ = drain(fd, onOutput: onOutput)
            closePipe(fd, onOutput: onOutput)
        }
        onExit(
            .lost("taskd-keeper, the run's parent, died before it: its exit status is unknown"),
            RunUsage(source: "rusage"))
    }

    /// Reports the end; the keeper, if it is the parent, forgets the run.
    private func ended(_ termination: Termination, _ usage: RunUsage) {
        onExit(termination, usage)
        keeper?.release(pid)
    }

    /// What `wait4` said the leader (and the children it waited for) used. Not its `ru_maxrss`:
    /// a child spawned by vfork inherits the spawner's peak at exec, so it would be taskd's.
    static func usage(_ r: rusage) -> RunUsage {
        RunUsage(
            cpuUSec: UInt64(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1_000_000
                + UInt64(r.ru_utime.tv_usec + r.ru_stime.tv_usec),
            ioReadBytes: UInt64(r.ru_inblock) * 512, ioWriteBytes: UInt64(r.ru_oublock) * 512, source: "rusage")
    }
}
