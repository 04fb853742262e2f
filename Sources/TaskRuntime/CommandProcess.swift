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
    private let state: Mutex<State>

    private struct State: Sendable {
        var exited = false
        /// The open pipe read ends, each with its line splitter.
        var splitters: [Int32: LineSplitter] = [:]
        /// The event-loop tokens of the open pipes still watched (none after SIGKILL: see `signalGroup`).
        var watched: [Int32: UInt64] = [:]
        /// One meter for both streams: the limit is per run.
        var limiter: OutputRateLimiter
    }

    /// Starts `argv` with exactly `environment` (`NAME=value`) as `identity`; `onOutput` gets each
    /// line (or a count of lines `outputLimit` dropped), then `onExit` gets the termination once the
    /// leader has exited and its output is drained.
    public static func spawn(
        argv: [String], environment: [String], workingDirectory: String?, stdin payload: String?,
        identity: ExecIdentity = ExecIdentity(), outputLimit: OutputRateLimit = .off, cgroup: RunCgroup? = nil,
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
            let process = CommandProcess(pid: pid, cgroup: cgroup, outputLimit: outputLimit)
            process.watch(
                pipes: [(outPipe[0], .stdout), (errPipe[0], .stderr), (notifyPipe[0], .notify)], onOutput: onOutput,
                onExit: onExit)
            return process
        case .failure(let error):
            close(outPipe[0])
            close(errPipe[0])
            close(notifyPipe[0])
            throw error
        }
    }

    /// The common case: nothing about the identity changes, so glibc's `posix_spawn` (a vfork) will do.
    private static func posixSpawn(
        _ path: String, _ argv: [UnsafeMutablePointer<CChar>?], _ env: [UnsafeMutablePointer<CChar>?],
        stdin: Int32, stdout: Int32, stderr: Int32, notify: Int32, cwd: String?
    ) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        // dup2 onto itself clears close-on-exec here (glibc ≥ 2.29, as POSIX asks).
        posix_spawn_file_actions_adddup2(&actions, notify, 3)
        taskd_spawn_addclosefrom(&actions, 4)
        if let cwd { taskd_spawn_addchdir(&actions, cwd) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, env)
        guard rc == 0 else { return .failure(SpawnError(message: "\(path): \(String(cString: strerror(rc)))")) }
        return .success(pid)
    }

    /// User=, Group=, SupplementaryGroups=, UMask= or Nice= is set, or the run has a cgroup: vfork
    /// and exec through the shim.
    private static func forkExec(
        _ path: String, _ argv: [UnsafeMutablePointer<CChar>?], _ env: [UnsafeMutablePointer<CChar>?],
        stdin: Int32, stdout: Int32, stderr: Int32, notify: Int32, cwd: String?, identity: ExecIdentity,
        cgroupFD: Int32?
    ) -> Result<pid_t, SpawnError> {
        var groups = (identity.groups ?? []).map { gid_t($0) }
        // Without root, a command may only run as taskd's own user, whose groups it keeps.
        let keepGroups = geteuid() != 0 && identity.uid.map { $0 == geteuid() } ?? true
        var step: Int32 = 0
        let pid = groups.withUnsafeMutableBufferPointer { buffer -> pid_t in
            var spec = taskd_exec_identity()
            spec.set_groups = identity.groups != nil && !keepGroups ? 1 : 0
            spec.groups = UnsafePointer(buffer.baseAddress)
            spec.ngroups = Int32(buffer.count)
            if let gid = identity.gid, gid != getegid() || geteuid() == 0 {
                spec.set_gid = 1
                spec.gid = gid
            }
            if let uid = identity.uid {
                spec.set_uid = 1
                spec.uid = uid
            }
            if let umask = identity.umask {
                spec.set_umask = 1
                spec.umask = mode_t(umask)
            }
            if let nice = identity.nice {
                spec.set_nice = 1
                spec.nice = nice
            }
            if let cgroupFD {
                spec.set_cgroup = 1
                spec.cgroup_fd = cgroupFD
            }
            return taskd_spawn_as(path, argv, env, stdin, stdout, stderr, notify, cwd, &spec, &step)
        }
        guard pid < 0 else { return .success(pid) }
        let reason = String(cString: strerror(errno))
        let what: String
        switch step {
        case Int32(TASKD_STEP_NICE.rawValue): what = "setting Nice=\(identity.nice ?? 0)"
        case Int32(TASKD_STEP_GROUPS.rawValue): what = "setting the supplementary groups"
        case Int32(TASKD_STEP_GID.rawValue): what = "setting Group= (gid \(identity.gid ?? 0))"
        case Int32(TASKD_STEP_UID.rawValue): what = "setting User= (uid \(identity.uid ?? 0))"
        case Int32(TASKD_STEP_CHDIR.rawValue): what = "WorkingDirectory=\(cwd ?? "")"
        case Int32(TASKD_STEP_EXEC.rawValue): what = path
        case Int32(TASKD_STEP_CGROUP.rawValue): what = "entering the run's cgroup"
        default: what = "starting \(path)"
        }
        return .failure(SpawnError(message: "\(what): \(reason)"))
    }

    private init(pid: pid_t, cgroup: RunCgroup?, outputLimit: OutputRateLimit) {
        self.pid = pid
        self.cgroup = cgroup
        self.state = Mutex(State(limiter: OutputRateLimiter(outputLimit)))
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

    private func watch(
        pipes: [(fd: Int32, stream: OutputLine.Stream)], onOutput: @escaping @Sendable (CommandOutput) -> Void,
        onExit: @escaping @Sendable (Termination, RunUsage) -> Void
    ) {
        let loop = EventLoop.shared
        for (fd, stream) in pipes {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            state.withLock { $0.splitters[fd] = LineSplitter(stream: stream) }
            let token = loop.register(fd: fd, events: EventLoop.readable) { [self] _ in
                if !self.drain(fd, onOutput: onOutput) { self.closePipe(fd) }
            }
            if let token {
                state.withLock { $0.watched[fd] = token }
            } else {
                state.withLock { _ = $0.splitters.removeValue(forKey: fd) }
                close(fd)
            }
        }
        let pidfd = taskd_pidfd_open(pid)
        let exitToken = pidfd < 0 ? nil : Mutex<UInt64?>(nil)
        if let exitToken {
            let token = loop.register(fd: pidfd, events: EventLoop.readable) { [self] _ in
                var status: Int32 = 0
                var usage = rusage()
                guard wait4(self.pid, &status, WNOHANG, &usage) == self.pid else { return }
                if let t = exitToken.withLock({ $0 }) { loop.deregister(fd: pidfd, token: t) }
                close(pidfd)
                self.exited(status: status, usage: usage, onOutput, onExit)
            }
            exitToken.withLock { $0 = token }
            if token != nil { return }
            close(pidfd)
        }
        // No pidfd (old kernel): wait on a dedicated thread instead of a cooperative one.
        let pid = self.pid
        Thread.detach {
            var status: Int32 = 0
            var usage = rusage()
            while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
            self.exited(status: status, usage: usage, onOutput, onExit)
        }
    }

    private func exited(
        status: Int32, usage: rusage, _ onOutput: @escaping @Sendable (CommandOutput) -> Void,
        _ onExit: @escaping @Sendable (Termination, RunUsage) -> Void
    ) {
        state.withLock { $0.exited = true }
        if cgroup == nil { ProcessReaper.shared.release(group: pid) }
        // Output written before the exit is delivered before the exit is reported.
        for fd in state.withLock({ $0.splitters.keys.sorted() }) {
            _ = drain(fd, onOutput: onOutput)
            closePipe(fd, onOutput: onOutput)
        }
        let dropped = state.withLock { $0.limiter.finish() }
        if dropped > 0 { onOutput(.dropped(lines: dropped)) }
        let termination = ExitStatus.termination(status)
        let own = Self.usage(usage)
        guard let cgroup else { return onExit(termination, own) }
        // What the leader left in its cgroup is killed; the run ends once the cgroup is empty.
        if cgroup.isPopulated { cgroup.killAll() }
        cgroup.whenEmpty {
            let usage = cgroup.usage(fallback: own)
            let oom = cgroup.oomKilled && !termination.isSuccess
            cgroup.remove()
            onExit(oom ? .outOfMemory : termination, usage)
        }
    }

    /// What `wait4` said the leader (and the children it waited for) used. Not its `ru_maxrss`:
    /// a child spawned by vfork inherits the spawner's peak at exec, so it would be taskd's.
    static func usage(_ r: rusage) -> RunUsage {
        RunUsage(
            cpuUSec: UInt64(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1_000_000
                + UInt64(r.ru_utime.tv_usec + r.ru_stime.tv_usec),
            ioReadBytes: UInt64(r.ru_inblock) * 512, ioWriteBytes: UInt64(r.ru_oublock) * 512, source: "rusage")
    }

    /// Stops watching a pipe and closes it, delivering a last unterminated line.
    private func closePipe(_ fd: Int32, onOutput: (@Sendable (CommandOutput) -> Void)? = nil) {
        let closing = state.withLock { s -> (token: UInt64?, rest: [CommandOutput])? in
            guard var splitter = s.splitters.removeValue(forKey: fd) else { return nil }
            let lines = Self.meter(splitter.finish(), &s)
            return (s.watched.removeValue(forKey: fd), lines)
        }
        guard let (token, rest) = closing else { return }
        if let token { EventLoop.shared.deregister(fd: fd, token: token) }
        close(fd)
        if let onOutput { rest.forEach(onOutput) }
    }

    /// Reads what is available on `fd`; false at end of stream (its last line already delivered).
    private func drain(_ fd: Int32, onOutput: @Sendable (CommandOutput) -> Void) -> Bool {
        // On the stack and not zero-filled: read writes the bytes that count.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16384) { buffer in
            drain(fd, into: buffer, onOutput: onOutput)
        }
    }

    private func drain(_ fd: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>, onOutput: (CommandOutput) -> Void)
        -> Bool
    {
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n > 0 {
                let bytes = UnsafeBufferPointer(rebasing: buffer[..<n])
                let lines = state.withLock { s in Self.meter(s.splitters[fd]?.feed(bytes) ?? [], &s) }
                lines.forEach(onOutput)
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            let rest = state.withLock { s in Self.meter(s.splitters[fd]?.finish() ?? [], &s) }
            rest.forEach(onOutput)
            return false
        }
    }

    /// Passes `lines` through the run's rate limit, at the current monotonic time; notifications
    /// pass as they are.
    private static func meter(_ lines: [OutputLine], _ s: inout State) -> [CommandOutput] {
        guard !lines.isEmpty else { return [] }
        if lines[0].stream == .notify { return lines.map { .notification($0.text) } }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
        var out: [CommandOutput] = []
        for line in lines {
            switch s.limiter.admit(atUSec: usec) {
            case .pass: out.append(.line(line))
            case .passAfterDropping(let n): out += [.dropped(lines: n), .line(line)]
            case .drop: break
            }
        }
        return out
    }

    /// `/dev/null`, opened once and shared by every command without a payload (an `open` per spawn
    /// was a path lookup on the wake's way to the command); -1 if it could not be opened.
    private static let devNull = open("/dev/null", O_RDONLY | O_CLOEXEC)

    private static func stdinDescriptor(_ payload: String?) throws(SpawnError) -> Int32 {
        guard let payload else {
            guard devNull >= 0 else { throw SpawnError(message: "/dev/null: cannot be opened") }
            return devNull
        }
        let fd = taskd_memfd_create("taskd-payload")
        guard fd >= 0 else { throw SpawnError(message: "memfd_create: \(String(cString: strerror(errno)))") }
        guard FileIO.writeAll(fd, Array(payload.utf8)) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SpawnError(message: "writing the payload: \(reason)")
        }
        lseek(fd, 0, SEEK_SET)
        return fd
    }

    /// A path as is (the spawn itself reports one that cannot be executed, naming it); a bare name
    /// searched in the command's `PATH`.
    static func resolve(_ program: String, environment: [String]) throws(SpawnError) -> String {
        if program.utf8.contains(UInt8(ascii: "/")) { return program }
        let path = environment.last { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) } ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw SpawnError(message: "\(program): not found in PATH (\(path))")
    }
}
