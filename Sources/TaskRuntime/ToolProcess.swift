import CTaskdShim
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// A short-lived helper program run to completion (taskd's own binary with `--version`):
/// `input` on its stdin, what it wrote to stdout and stderr (at most 1 MiB each), its exit status.
/// Blocking: call it on a thread of its own (`Thread.run`, a Dispatch queue), never on the pool.
public enum ToolProcess {
    public struct Outcome: Sendable {
        /// The exit status; nil if it could not start, was killed by a signal, or ran past the timeout.
        public var status: Int32?
        public var output: [UInt8]
        public var errors: [UInt8]
        /// Why there is no status, if there is none.
        public var problem: String?

        public var outputText: String { String(decoding: output, as: UTF8.self) }
        public var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    static let limit = 1 << 20

    /// Runs `argv` (`argv[0]` a path) with `environment` (nil: taskd's), killed after `timeoutMS`.
    /// With `mergeErrors`, stderr goes to `output` as well, in order.
    public static func run(
        _ argv: [String], input: [UInt8] = [], environment: [String]? = nil, timeoutMS: Int32 = 30_000,
        mergeErrors: Bool = false
    ) -> Outcome {
        var failed = Outcome(status: nil, output: [], errors: [], problem: nil)
        var stdinPipe: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard taskd_pipe_cloexec(&stdinPipe) == 0, taskd_pipe_cloexec(&outPipe) == 0, taskd_pipe_cloexec(&errPipe) == 0
        else {
            for fd in stdinPipe + outPipe + errPipe where fd >= 0 { close(fd) }
            failed.problem = "pipe: \(String(cString: strerror(errno)))"
            return failed
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, mergeErrors ? outPipe[1] : errPipe[1], 2)
        taskd_spawn_addclosefrom(&actions, 3)
        var pid: pid_t = 0
        let cArgv = argv.map { strdup($0) } + [nil]
        defer { for p in cArgv { free(p) } }
        let cEnv = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for p in cEnv ?? [] { free(p) } }
        let rc =
            cEnv.map { env in posix_spawn(&pid, argv[0], &actions, nil, cArgv, env) }
            ?? posix_spawn(&pid, argv[0], &actions, nil, cArgv, environ)
        close(stdinPipe[0])
        close(outPipe[1])
        close(errPipe[1])
        defer {
            close(outPipe[0])
            close(errPipe[0])
        }
        guard rc == 0 else {
            close(stdinPipe[1])
            failed.problem = "\(argv[0]): \(String(cString: strerror(rc)))"
            return failed
        }
        // The input is small (an etcd transaction): written at once; a child that exits without
        // reading it makes the write fail with EPIPE, not a signal (taskd ignores SIGPIPE).
        if !input.isEmpty { FileIO.writeAll(stdinPipe[1], input) }
        close(stdinPipe[1])
        var result = Outcome(status: nil, output: [], errors: [], problem: nil)
        let timedOut = collect(out: outPipe[0], err: errPipe[0], into: &result, killing: pid, after: timeoutMS)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if timedOut {
            result.problem = "\(argv[0]) did not finish within \(Double(timeoutMS) / 1000) s"
        } else if status & 0x7f != 0 {  // WIFSIGNALED, which Swift does not import
            result.problem = "\(argv[0]) was killed by signal \(status & 0x7f)"
        } else {
            result.status = (status >> 8) & 0xff
        }
        return result
    }

    /// Reads the child's output and errors (each up to `limit`) until both pipes close; kills the
    /// child (SIGKILL) if that takes more than `timeoutMS`, and then returns true.
    private static func collect(
        out: Int32, err: Int32, into result: inout Outcome, killing pid: pid_t, after timeoutMS: Int32
    ) -> Bool {
        var open = [out, err]
        var buffer = [UInt8](repeating: 0, count: 16384)
        let deadline = monotonicMS() + Int64(timeoutMS)
        while !open.isEmpty {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let left = deadline - monotonicMS()
            let ready = left <= 0 ? 0 : poll(&fds, nfds_t(fds.count), Int32(clamping: left))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 {
                kill(pid, SIGKILL)
                return true
            }
            for p in fds where p.revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(p.fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    open.removeAll { $0 == p.fd }
                } else if p.fd == out {
                    if result.output.count < limit { result.output += buffer[0..<n] }
                } else if result.errors.count < limit {
                    result.errors += buffer[0..<n]
                }
            }
        }
        return false
    }

    private static func monotonicMS() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
