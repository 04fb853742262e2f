import CTaskdShim
import Synchronization
import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// taskd's connection to the run keeper (`taskd-keeper`, C): the process that spawns each command
/// run and stays its parent, so that the run outlives taskd and its exit status is kept for the
/// next taskd (docs/run-life.md, "Runs that outlive taskd"). Requests are answered in order; exits
/// arrive on the event loop as the keeper reaps each run.
public final class RunKeeper: Sendable {
    /// A run the keeper holds, as a taskd that starts finds it.
    public struct KeptRun: Sendable {
        public var runID: String
        public var pid: pid_t
        /// The read ends of its standard output, standard error and notify pipe, in that order.
        public var pipes: [Int32]
        /// Its wait status, if it ended while no taskd was there.
        public var waitStatus: Int32?
        public var usage: RunUsage?
        /// What taskd gave the keeper when it spawned the run (its state), if anything.
        public var snapshot: [UInt8]?
    }

    /// The socket's name in the state folder.
    public static let socketName = "keeper.sock"

    /// The connection (a SOCK_SEQPACKET socket), exposed for an upgrade in place to hand over.
    public let descriptor: Int32
    private let state = Mutex(State())
    /// One request (spawn, list) at a time.
    private let requests = Mutex(())

    private struct State: Sendable {
        var token: UInt64?
        var gone = false
        var onExit: [pid_t: @Sendable (Int32?, RunUsage) -> Void] = [:]
        /// Exits that came before their run's `whenExited`.
        var early: [pid_t: (Int32, RunUsage)] = [:]
        var reply: taskd_keeper_message?
        var hello: pid_t?
        var listed: [KeptRun] = []
        var listEnded = false
        var onLoss: (@Sendable () -> Void)?
        /// The keeper's protocol, as HELLO said (`TASKD_KEEPER_PROTOCOL`; 0 before OUTPUT).
        var version: Int32 = 0
        /// The OUTPUT request the keeper works on (one at a time), and those waiting.
        var writing: Write?
        var writes: [Write] = []
    }

    /// An OUTPUT request: its message's fields and payload, and what to call once written.
    private struct Write: Sendable {
        var pid: pid_t
        var pipe: Int32
        var text: Bool
        var consume: UInt64
        var records: UInt32
        var payload: [UInt8]
        var done: @Sendable (Written) -> Void
    }

    /// How an OUTPUT request ended: `written` (its entries, `shed` of them dropped as journald fell
    /// behind) and `taken` (its bytes taken out of the pipe); neither if it never reached the keeper.
    struct Written: Sendable {
        var written: Bool
        var taken: Bool
        var shed: Int

        static let refused = Written(written: false, taken: false, shed: 0)
    }

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Connects to the keeper a taskd before this one left in `stateDirectory`; nil if there is none.
    public static func connect(stateDirectory: String) -> RunKeeper? {
        let fd = taskd_keeper_connect(stateDirectory, socketName)
        return fd >= 0 ? RunKeeper(descriptor: fd).watched().greeted() : nil
    }

    /// Starts `executable` as the keeper of `stateDirectory` and connects to it; or why it could not.
    public static func start(stateDirectory: String, executable: String) -> Result<RunKeeper, SpawnError> {
        let listener = taskd_keeper_listen(stateDirectory, socketName)
        guard listener >= 0 else {
            return .failure(SpawnError(message: "\(stateDirectory)/\(socketName): \(String(cString: strerror(errno)))"))
        }
        defer { close(listener) }
        guard taskd_keeper_start(executable, listener) > 0 else {
            return .failure(SpawnError(message: "\(executable): \(String(cString: strerror(errno)))"))
        }
        let connection = taskd_keeper_connect(stateDirectory, socketName)
        guard connection >= 0 else {
            return .failure(SpawnError(message: "\(stateDirectory)/\(socketName): \(String(cString: strerror(errno)))"))
        }
        return .success(RunKeeper(descriptor: connection).watched().greeted())
    }

    /// The connection an earlier image of taskd handed over (`taskctl upgrade`). Its greeting is
    /// also a barrier: the keeper answers in order, so what the earlier image asked it to write is
    /// written, and taken out of the pipes, before this image reads them.
    public static func inherited(_ descriptor: Int32) -> RunKeeper {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return RunKeeper(descriptor: descriptor).watched().greeted()
    }

    /// `taskd-keeper` beside `executable`, or in `../libexec/NAME/` (NAME: the executable's, as an
    /// app daemon's package installs it) or `../libexec/taskd/` from its folder; nil if none.
    public static func locate(beside executable: String) -> String? {
        let slash = executable.lastIndex(of: "/")
        let folder = executable[..<(slash ?? executable.startIndex)]
        let name = slash.map { executable[executable.index(after: $0)...] } ?? executable[...]
        return [
            folder + "/taskd-keeper", folder + "/../libexec/\(name)/taskd-keeper",
            folder + "/../libexec/taskd/taskd-keeper",
        ].first { access($0, X_OK) == 0 }
    }

    /// Asks the keeper's protocol (and waits for the answer).
    private func greeted() -> RunKeeper {
        _ = pid
        return self
    }

    /// Whether the keeper writes the output of the runs it holds (`write`); an older keeper,
    /// still running after an upgrade, does not, and taskd then reads the pipes itself.
    public var writesOutput: Bool { state.withLock { $0.version >= TASKD_KEEPER_PROTOCOL } }

    private func watched() -> RunKeeper {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let token = EventLoop.shared.register(fd: descriptor, events: EventLoop.readable) { [self] _ in pump() }
        state.withLock { $0.token = token }
        return self
    }

    /// Called once if the keeper goes away (it died): the runs it held can no longer be watched.
    public func whenLost(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.onLoss = action }
    }

    /// The keeper's pid, as it says (the connection's peer credentials name whoever made the
    /// listening socket: a taskd); nil if it does not answer.
    public var pid: pid_t? {
        var events = Events()
        defer { events.deliverLater() }
        return requests.withLock { _ -> pid_t? in
            state.withLock { $0.hello = nil }
            guard taskd_keeper_send(descriptor, TASKD_KEEPER_HELLO.rawValue, 0) == 0 else { return nil }
            wait(&events) { $0.hello != nil || $0.gone }
            return state.withLock { $0.hello }
        }
    }

    /// Whether the keeper went away.
    public var isGone: Bool { state.withLock { $0.gone } }

    /// The runs the keeper holds (after a taskd before this one stopped without ending them).
    public func kept() -> [KeptRun] {
        var events = Events()
        defer { events.deliverLater() }
        return requests.withLock { _ in
            state.withLock {
                $0.listed = []
                $0.listEnded = false
            }
            guard taskd_keeper_send(descriptor, TASKD_KEEPER_LIST.rawValue, 0) == 0 else { return [] }
            wait(&events) { $0.listEnded || $0.gone }
            return state.withLock { s in
                defer { s.listed = [] }
                return s.listed
            }
        }
    }

    /// Spawns a command through the keeper: `fds` are its stdin, stdout, stderr and notify write
    /// ends, then the three read ends (which the keeper keeps a copy of)[, the cgroup's `cgroup.procs`];
    /// `snapshot`: what the keeper keeps with the run and gives a taskd that starts after this one.
    func spawn(
        runID: String, path: String, argv: [UnsafeMutablePointer<CChar>?], env: [UnsafeMutablePointer<CChar>?],
        cwd: String?, identity: inout taskd_exec_identity, fds: [Int32], snapshot: [UInt8] = []
    ) -> (pid: pid_t, step: Int32, error: Int32) {
        // pid -1: the spawn failed at `step` with `error` (as `taskd_spawn_as` reports them). Exits
        // read while waiting are delivered after, on the loop.
        var events = Events()
        defer { events.deliverLater() }
        return requests.withLock { _ -> (pid: pid_t, step: Int32, error: Int32) in
            state.withLock { $0.reply = nil }
            let sent = fds.withUnsafeBufferPointer { fdBuffer in
                snapshot.withUnsafeBytes { bytes in
                    taskd_keeper_request_spawn(
                        descriptor, runID, path, argv, env, cwd, &identity, fdBuffer.baseAddress, Int32(fds.count),
                        bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
                }
            }
            guard sent == 0 else { return (-1, Int32(TASKD_STEP_FORK.rawValue), errno) }
            wait(&events) { $0.reply != nil || $0.gone }
            guard let reply = state.withLock({ $0.reply.take() }) else {
                return (-1, Int32(TASKD_STEP_FORK.rawValue), ECONNRESET)
            }
            if reply.type == TASKD_KEEPER_SPAWNED.rawValue { return (reply.pid, 0, 0) }
            return (-1, reply.step, reply.error)
        }
    }

    /// Calls `action` with the run's wait status and usage once the keeper has reaped it, or with
    /// nil if the keeper went away first.
    func whenExited(_ pid: pid_t, _ action: @escaping @Sendable (Int32?, RunUsage) -> Void) {
        let early = state.withLock { s -> (Int32?, RunUsage)? in
            if let early = s.early.removeValue(forKey: pid) { return early }
            if s.gone { return (nil, RunUsage(source: "rusage")) }
            s.onExit[pid] = action
            return nil
        }
        if let (status, usage) = early {
            Task(executorPreference: EventLoop.shared) { action(status, usage) }
        }
    }

    /// Stops reporting the run's exit here (it is handed to the next image of taskd).
    /// Its requests not yet sent are dropped (their bytes stay in the pipes, for the next image);
    /// one the keeper works on is waited for, so the next image reads the pipes after it.
    func forget(_ pid: pid_t) {
        let inFlight = state.withLock { s in
            s.onExit.removeValue(forKey: pid)
            s.writes.removeAll { $0.pid == pid }
            return s.writing?.pid == pid
        }
        if inFlight { _ = self.pid }
    }

    /// Has the keeper write `records` (a `KeptOutput`'s) and then take `consume` bytes out of the
    /// run's pipe (`pipe`: 0 standard output, 1 standard error, 2 notify); `done` is called on the
    /// loop with how it went. One request is with the keeper at a time.
    func write(
        pid: pid_t, pipe: Int32, records: [[UInt8]], text: Bool, consume: Int,
        done: @escaping @Sendable (Written) -> Void
    ) {
        var payload: [UInt8] = []
        payload.reserveCapacity(records.reduce(0) { $0 + 4 + $1.count })
        for record in records {
            withUnsafeBytes(of: UInt32(record.count)) { payload += $0 }
            payload += record
        }
        let write = Write(
            pid: pid, pipe: pipe, text: text, consume: UInt64(consume), records: UInt32(records.count),
            payload: payload, done: done)
        let refused = state.withLock { s -> Bool in
            if s.gone { return true }
            if s.writing != nil {
                s.writes.append(write)
                return false
            }
            return !send(write, &s)
        }
        if refused { Task(executorPreference: EventLoop.shared) { done(.refused) } }
    }

    /// Sends `write` and makes it the one the keeper works on; false if it could not be sent.
    private func send(_ write: Write, _ s: inout State) -> Bool {
        let sent = write.payload.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                taskd_keeper_send_output(
                    descriptor, write.pid, write.pipe, write.text ? 1 : 0, write.consume, write.records,
                    $0.baseAddress, $0.count)
            }
        }
        guard sent == 0 else { return false }
        s.writing = write
        return true
    }

    /// Replaces what the keeper keeps with the run (`spawn`'s `snapshot`): a wake joined it. An
    /// older keeper (`writesOutput` false) does not know the request, and is not sent it.
    public func note(_ pid: pid_t, snapshot: [UInt8]) {
        guard writesOutput else { return }
        _ = snapshot.withUnsafeBytes {
            taskd_keeper_send_note(descriptor, pid, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count)
        }
    }

    /// The run's end is recorded (or it was killed unknown): the keeper forgets it.
    public func release(_ pid: pid_t) {
        _ = taskd_keeper_send(descriptor, TASKD_KEEPER_RELEASE.rawValue, pid)
    }

    /// taskd stops and its runs have ended: the keeper exits.
    public func quit() {
        _ = taskd_keeper_send(descriptor, TASKD_KEEPER_QUIT.rawValue, 0)
    }

    /// What reading the socket found for the runs: exits to deliver, and whether the keeper is lost.
    private struct Events {
        var exits: [(@Sendable (Int32?, RunUsage) -> Void, Int32?, RunUsage)] = []
        var written: [(@Sendable (Written) -> Void, Written)] = []
        var lost: (@Sendable () -> Void)?

        mutating func deliver() {
            for (done, ok) in written { done(ok) }
            for (action, status, usage) in exits { action(status, usage) }
            lost?()
            self = Events()
        }

        /// Delivers them as a job of their own on the event loop: a request is made while the daemon
        /// performs its actions, which the end of a run must not enter.
        mutating func deliverLater() {
            guard !exits.isEmpty || !written.isEmpty || lost != nil else { return }
            let later = self
            self = Events()
            Task(executorPreference: EventLoop.shared) {
                var events = later
                events.deliver()
            }
        }
    }

    /// Waits, reading messages, until `done` holds of the state.
    private func wait(_ events: inout Events, _ done: (State) -> Bool) {
        while !state.withLock({ done($0) }) {
            var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            // Briefly: the event loop may read the answer first (`pump`), and that wakes no poll here.
            _ = Glibc.poll(&poll, 1, 10)
            read(into: &events)
        }
    }

    /// Reads the socket on the event loop.
    private func pump() {
        var events = Events()
        read(into: &events)
        events.deliver()
    }

    /// Reads every message waiting: exits for their runs, replies for the request waiting.
    private func read(into events: inout Events) {
        state.withLock { s in
            while !s.gone {
                var message = taskd_keeper_message()
                var fds: (Int32, Int32, Int32) = (-1, -1, -1)
                var count: Int32 = 0
                var payload: UnsafeMutablePointer<CChar>?
                var length = 0
                let r = withUnsafeMutablePointer(to: &fds) {
                    $0.withMemoryRebound(to: Int32.self, capacity: 3) {
                        taskd_keeper_receive(descriptor, &message, $0, &count, 1, &payload, &length)
                    }
                }
                let bytes = payload.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) }
                free(payload)
                if r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
                if r <= 0 {
                    s.gone = true
                    if let token = s.token { EventLoop.shared.deregister(fd: descriptor, token: token) }
                    events.lost = s.onLoss
                    // Every run still watched ends now, its status unknown; no output is written.
                    events.exits += s.onExit.values.map { ($0, nil, RunUsage(source: "rusage")) }
                    s.onExit = [:]
                    events.written += ([s.writing.take()].compactMap { $0 } + s.writes).map { ($0.done, .refused) }
                    s.writes = []
                    return
                }
                let received = [fds.0, fds.1, fds.2].prefix(Int(count))
                switch message.type {
                case TASKD_KEEPER_EXITED.rawValue:
                    let usage = Self.usage(message)
                    if let action = s.onExit.removeValue(forKey: message.pid) {
                        events.exits.append((action, message.status, usage))
                    } else {
                        s.early[message.pid] = (message.status, usage)
                    }
                case TASKD_KEEPER_RUN.rawValue:
                    let runID = withUnsafeBytes(of: message.run_id) {
                        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                    }
                    s.listed.append(
                        KeptRun(
                            runID: runID, pid: message.pid, pipes: Array(received),
                            waitStatus: message.exited != 0 ? message.status : nil,
                            usage: message.exited != 0 ? Self.usage(message) : nil, snapshot: bytes))
                    continue
                case TASKD_KEEPER_LIST_END.rawValue: s.listEnded = true
                case TASKD_KEEPER_HELLO.rawValue:
                    s.hello = message.pid
                    s.version = message.status
                case TASKD_KEEPER_WRITTEN.rawValue:
                    // One for an earlier image's request (after an upgrade) matches none here.
                    guard let write = s.writing, write.pid == message.pid, write.pipe == message.step else { break }
                    // Bytes it could not take would be read and written again: taskd takes the pipe over.
                    events.written.append(
                        (
                            write.done,
                            Written(
                                written: true, taken: message.cpu_usec == write.consume,
                                shed: Int(max(0, message.status)))
                        ))
                    s.writing = nil
                    while !s.writes.isEmpty {
                        let next = s.writes.removeFirst()
                        if send(next, &s) { break }
                        events.written.append((next.done, .refused))
                    }
                case TASKD_KEEPER_SPAWNED.rawValue, TASKD_KEEPER_FAILED.rawValue: s.reply = message
                default: break
                }
                received.forEach { close($0) }
            }
        }
    }

    private static func usage(_ m: taskd_keeper_message) -> RunUsage {
        RunUsage(
            cpuUSec: m.cpu_usec, ioReadBytes: m.read_blocks * 512, ioWriteBytes: m.write_blocks * 512, source: "rusage")
    }
}
