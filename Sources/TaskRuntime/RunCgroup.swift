@preconcurrency import Dispatch
import Synchronization
import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// One command run's cgroup (`run-ID` below taskd's own): made before the spawn, entered by the
/// child before it execs (so nothing it forks escapes), signalled and killed whole, and watched on
/// the event loop until it is empty; its accounting is read before it is removed.
public final class RunCgroup: Sendable {
    public let path: String
    /// `cgroup.procs`, open for writing: the child writes "0" to it to move itself in.
    let procsFD: Int32
    private let eventsFD: Int32
    private let watch = Mutex<(token: UInt64?, onEmpty: (@Sendable () -> Void)?)>((nil, nil))

    /// Makes `parent/name` with `limits` written; the limits a missing controller cannot apply are
    /// returned in `unapplied` (`MemoryMax=` without the memory controller).
    public init(parent: String, name: String, limits: ResourceLimits, unapplied: inout [String]) throws(SpawnError) {
        path = parent + "/" + name
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw SpawnError(message: "cgroup \(path): \(String(cString: strerror(errno)))")
        }
        for (_, file, value) in limits.files where !Self.write(path + "/" + file, value) {
            unapplied.append("\(file)=\(value): \(String(cString: strerror(errno)))")
        }
        do {
            (procsFD, eventsFD) = try Self.openFiles(path)
        } catch {
            rmdir(path)
            throw error
        }
    }

    /// Opens the run cgroup at `path` that an earlier image of taskd made (`taskctl upgrade`).
    public init(adopting path: String) throws(SpawnError) {
        self.path = path
        (procsFD, eventsFD) = try Self.openFiles(path)
    }

    /// `cgroup.procs` for writing and `cgroup.events` for reading, or why not.
    private static func openFiles(_ path: String) throws(SpawnError) -> (procs: Int32, events: Int32) {
        let procs = open(path + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
        let events = open(path + "/cgroup.events", O_RDONLY | O_CLOEXEC)
        guard procs >= 0, events >= 0 else {
            let reason = String(cString: strerror(errno))
            if procs >= 0 { close(procs) }
            if events >= 0 { close(events) }
            throw SpawnError(message: "cgroup \(path): \(reason)")
        }
        return (procs, events)
    }

    /// Whether any process is left in it (`cgroup.events`: `populated 1`).
    public var isPopulated: Bool { Self.field(Self.readAt(eventsFD) ?? "", "populated") != 0 }

    /// Sends `signal` to every process in it.
    public func signalAll(_ signal: Int32) {
        for pid in pids { Glibc.kill(pid, signal) }
    }

    /// Kills every process in it at once (`cgroup.kill`); where the kernel has no `cgroup.kill`
    /// (before 5.14), freezes it, SIGKILLs each process and thaws it, so none forks meanwhile.
    public func killAll() {
        if Self.write(path + "/cgroup.kill", "1") { return }
        _ = Self.write(path + "/cgroup.freeze", "1")
        signalAll(SIGKILL)
        _ = Self.write(path + "/cgroup.freeze", "0")
    }

    /// Calls `body` on the event loop once it is empty (at once if it is already).
    public func whenEmpty(_ body: @escaping @Sendable () -> Void) {
        let fd = eventsFD
        let token = EventLoop.shared.register(fd: fd, events: EventLoop.priority) { [self] _ in
            guard !isPopulated else { return }
            fireEmpty()
        }
        watch.withLock { $0 = (token, body) }
        if token == nil || !isPopulated { fireEmpty() }
    }

    private func fireEmpty() {
        let body = watch.withLock { w -> (@Sendable () -> Void)? in
            if let token = w.token { EventLoop.shared.deregister(fd: eventsFD, token: token) }
            defer { w = (nil, nil) }
            return w.onEmpty
        }
        body?()
    }

    /// What the run used: CPU from `cpu.stat` (always there), peak memory and IO where their
    /// controllers are enabled; what is missing comes from `fallback` (the main process's rusage).
    public func usage(fallback: RunUsage?) -> RunUsage {
        var usage = RunUsage(source: "cgroup")
        usage.cpuUSec = Self.read(path + "/cpu.stat").map { UInt64(Self.field($0, "usage_usec")) }
        usage.memoryPeakBytes =
            Self.read(path + "/memory.peak").flatMap { UInt64($0.trimmingWhitespace) } ?? fallback?.memoryPeakBytes
        if let io = Self.read(path + "/io.stat") {
            var read: UInt64 = 0
            var written: UInt64 = 0
            for line in io.split(separator: "\n") {
                read += UInt64(Self.field(String(line), "rbytes"))
                written += UInt64(Self.field(String(line), "wbytes"))
            }
            usage.ioReadBytes = read
            usage.ioWriteBytes = written
        } else {
            usage.ioReadBytes = fallback?.ioReadBytes
            usage.ioWriteBytes = fallback?.ioWriteBytes
        }
        return usage
    }

    /// Whether the kernel's OOM killer killed a process in it (`memory.events`: `oom_kill`).
    public var oomKilled: Bool { Self.read(path + "/memory.events").map { Self.field($0, "oom_kill") > 0 } ?? false }

    /// Removes it (it must be empty); the fds go with it.
    public func remove() {
        close(procsFD)
        close(eventsFD)
        rmdir(path)
    }

    /// Removes it once it is empty, then calls `done`. The kernel can refuse the `rmdir` with
    /// EBUSY for a while after `populated 0` while the last process finishes its exit (longer on
    /// a loaded or emulated machine), so an EBUSY is retried, 10 ms apart, for at most 10 s
    /// before `done` is called either way.
    public func remove(then done: @escaping @Sendable () -> Void) {
        close(procsFD)
        close(eventsFD)
        Self.removeDirectory(path, triesLeft: 1000, then: done)
    }

    private static func removeDirectory(_ path: String, triesLeft: Int, then done: @escaping @Sendable () -> Void) {
        guard rmdir(path) != 0, errno == EBUSY, triesLeft > 0 else { return done() }
        retryQueue.asyncAfter(deadline: .now() + .milliseconds(10)) {
            removeDirectory(path, triesLeft: triesLeft - 1, then: done)
        }
    }

    private static let retryQueue = DispatchQueue(label: "taskd.cgroup-remove")

    /// The pids in it now.
    var pids: [pid_t] {
        (Self.read(path + "/cgroup.procs") ?? "").split(separator: "\n").compactMap { pid_t($0) }
    }

    // MARK: cgroupfs files

    static func write(_ path: String, _ text: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return Glibc.write(fd, bytes, bytes.count) == bytes.count
    }

    static func read(_ path: String) -> String? {
        guard case .success(let bytes) = FileIO.read(path) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func readAt(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = pread(fd, &buffer, buffer.count, 0)
        return n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : nil
    }

    /// The number after `name` in a `name value` or `name=value` list (0 if absent).
    static func field(_ text: String, _ name: String) -> Int {
        let words = text.split(whereSeparator: { $0 == "\n" || $0 == " " })
        for (i, word) in words.enumerated() {
            if word.hasPrefix(name + "=") { return Int(word.dropFirst(name.count + 1)) ?? 0 }
            if word == name, i + 1 < words.count { return Int(words[i + 1]) ?? 0 }
        }
        return 0
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(self.filter { !$0.isWhitespace })
    }
}
