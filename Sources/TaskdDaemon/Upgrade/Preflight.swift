import CTaskdShim

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the new binary of an upgrade with `--version` or `--check-config` before taskd execs it:
/// its exit status and what it printed (at most 64 KiB). Blocking: call it on a thread of its own.
enum Preflight {
    /// Nil status: it could not be started, or was killed after `timeoutMS` (the output says which).
    static func run(_ argv: [String], timeoutMS: Int32 = 30_000) -> (status: Int32?, output: String) {
        var pipe: [Int32] = [-1, -1]
        guard taskd_pipe_cloexec(&pipe) == 0 else { return (nil, "pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        taskd_spawn_addclosefrom(&actions, 3)
        var pid: pid_t = 0
        let cArgv = argv.map { strdup($0) } + [nil]
        defer { for p in cArgv { free(p) } }
        let rc = posix_spawn(&pid, argv[0], &actions, nil, cArgv, environ)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard rc == 0 else { return (nil, "\(argv[0]): \(String(cString: strerror(rc)))") }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var timedOut = false
        while true {
            var p = pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, timeoutMS)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 {
                timedOut = true
                kill(pid, SIGKILL)
                break
            }
            let n = buffer.withUnsafeMutableBytes { read(pipe[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            if output.count < 65536 { output += buffer[0..<n] }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = String(decoding: output, as: UTF8.self)
        if timedOut { return (nil, "\(argv[0]) did not finish within \(timeoutMS / 1000) s") }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        guard status & 0x7f == 0 else { return (nil, "\(argv[0]) was killed by signal \(status & 0x7f)\n" + text) }
        return ((status >> 8) & 0xff, text)
    }
}
