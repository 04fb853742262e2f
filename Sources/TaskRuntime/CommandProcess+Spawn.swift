import CTaskdShim
import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// How a command's process is made (its path resolved, its stdin prepared): by the run keeper when taskd has one (`RunKeeper`); else
/// `posix_spawn` when nothing about its identity changes, or a vfork through the C shim that
/// changes it (and enters the run's cgroup) before the `exec`.
extension CommandProcess {
    /// The common case: nothing about the identity changes, so glibc's `posix_spawn` (a vfork) will do.
    static func posixSpawn(
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
    static func forkExec(
        _ path: String, _ argv: [UnsafeMutablePointer<CChar>?], _ env: [UnsafeMutablePointer<CChar>?],
        stdin: Int32, stdout: Int32, stderr: Int32, notify: Int32, cwd: String?, identity: ExecIdentity,
        cgroupFD: Int32?
    ) -> Result<pid_t, SpawnError> {
        var step: Int32 = 0
        let pid = withSpec(identity, cgroupFD: cgroupFD) { spec in
            taskd_spawn_as(path, argv, env, stdin, stdout, stderr, notify, cwd, &spec, &step)
        }
        guard pid < 0 else { return .success(pid) }
        return .failure(failure(step: step, error: errno, path: path, cwd: cwd, identity: identity))
    }

    /// Through the run keeper, which makes the same vfork and exec and stays the command's parent.
    /// `fds`: stdin, stdout, stderr, notify, then the read ends of the three pipes.
    static func keeperSpawn(
        _ keeper: RunKeeper, runID: String, _ path: String, _ argv: [UnsafeMutablePointer<CChar>?],
        _ env: [UnsafeMutablePointer<CChar>?], fds: [Int32], cwd: String?, identity: ExecIdentity, cgroupFD: Int32?,
        snapshot: [UInt8]
    ) -> Result<pid_t, SpawnError> {
        // The cgroup's cgroup.procs travels as the last descriptor.
        let result = withSpec(identity, cgroupFD: nil) { spec in
            keeper.spawn(
                runID: runID, path: path, argv: argv, env: env, cwd: cwd, identity: &spec,
                fds: fds + (cgroupFD.map { [$0] } ?? []), snapshot: snapshot)
        }
        guard result.pid < 0 else { return .success(result.pid) }
        return .failure(failure(step: result.step, error: result.error, path: path, cwd: cwd, identity: identity))
    }

    /// The C spec of `identity` (valid within `body`).
    private static func withSpec<R>(
        _ identity: ExecIdentity, cgroupFD: Int32?, _ body: (inout taskd_exec_identity) -> R
    ) -> R {
        var groups = (identity.groups ?? []).map { gid_t($0) }
        // Without root, a command may only run as taskd's own user, whose groups it keeps.
        let keepGroups = geteuid() != 0 && identity.uid.map { $0 == geteuid() } ?? true
        return groups.withUnsafeMutableBufferPointer { buffer -> R in
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
            return body(&spec)
        }
    }

    /// What failed, named after the setting or the path (`step`, `error` as the shim reports them).
    private static func failure(step: Int32, error: Int32, path: String, cwd: String?, identity: ExecIdentity)
        -> SpawnError
    {
        let reason = String(cString: strerror(error))
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
        return SpawnError(message: "\(what): \(reason)")
    }

    /// `/dev/null`, opened once and shared by every command without a payload (an `open` per spawn
    /// was a path lookup on the wake's way to the command); -1 if it could not be opened.
    static let devNull = open("/dev/null", O_RDONLY | O_CLOEXEC)

    static func stdinDescriptor(_ payload: String?) throws(SpawnError) -> Int32 {
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

/// Why a command could not be started.
public struct SpawnError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
