import Foundation
import Synchronization
import TaskScheduling
import TaskdIO
import Testing

@testable import TaskRuntime

/// Collects what a real command did: its lines and its termination.
final class Recorder: Sendable {
    let lines = Mutex<[OutputLine]>([])
    /// Every `.dropped` report, in order.
    let dropped = Mutex<[Int]>([])
    /// The lines written to the notify descriptor, in order.
    let notifications = Mutex<[String]>([])
    let usage = Mutex<RunUsage?>(nil)
    let (ended, continuation) = AsyncStream.makeStream(of: Termination.self)

    func spawn(
        _ argv: [String], env: [String] = ["PATH=/usr/bin:/bin"], stdin: String? = nil, cwd: String? = nil,
        identity: ExecIdentity = ExecIdentity(), limit: OutputRateLimit = .off, cgroup: RunCgroup? = nil,
        keeper: RunKeeper? = nil, runID: String = "", snapshot: [UInt8] = [], keptOutput: KeptOutput? = nil
    ) throws -> CommandProcess {
        try CommandProcess.spawn(
            argv: argv, environment: env, workingDirectory: cwd, stdin: stdin, identity: identity, outputLimit: limit,
            cgroup: cgroup, keeper: keeper, runID: runID, snapshot: snapshot, keptOutput: keptOutput,
            onOutput: { output in
                switch output {
                case .line(let line): self.lines.withLock { $0.append(line) }
                case .dropped(let n): self.dropped.withLock { $0.append(n) }
                case .shed: break
                case .notification(let line): self.notifications.withLock { $0.append(line) }
                }
            },
            onExit: { t, usage in
                self.usage.withLock { $0 = usage }
                self.continuation.yield(t)
                self.continuation.finish()
            })
    }

    /// Takes over `run` from the keeper, as a taskd that starts after a crash does.
    @discardableResult
    func adopt(_ run: RunKeeper.KeptRun, keeper: RunKeeper, keptOutput: KeptOutput? = nil) -> CommandProcess {
        let handoff = CommandHandoff(
            pid: run.pid,
            pipes: zip(run.pipes, [OutputLine.Stream.stdout, .stderr, .notify]).map {
                CommandHandoff.Pipe(fd: $0, stream: $1)
            }, cgroup: nil, waitStatus: run.waitStatus, kept: true)
        return CommandProcess.adopt(
            handoff, keeper: keeper, keptOutput: keptOutput,
            onOutput: { output in
                switch output {
                case .line(let line): self.lines.withLock { $0.append(line) }
                case .notification(let line): self.notifications.withLock { $0.append(line) }
                case .dropped, .shed: break
                }
            },
            onExit: { t, _ in
                self.continuation.yield(t)
                self.continuation.finish()
            })
    }

    func termination() async -> Termination? {
        for await t in ended { return t }
        return nil
    }

    var texts: [String] { lines.withLock { $0.map(\.text) } }
}

@Suite("Commands: real processes, groups and signals", .serialized)
struct CommandProcessTests {
    @Test("exit status, output lines in order, payload on stdin, exact environment, working directory")
    func basics() async throws {
        let r = Recorder()
        _ = try r.spawn(
            ["/bin/sh", "-c", "cat; echo; echo \"env=$(env | sort | tr '\\n' ' ')\"; pwd; echo '<3>oops' >&2; exit 7"],
            env: ["PATH=/usr/bin:/bin", "ONLY=this"], stdin: "{\"x\":1}", cwd: "/tmp")
        #expect(await r.termination() == .exited(7))
        let texts = r.texts
        #expect(texts.first == "{\"x\":1}")
        #expect(texts.contains { $0.hasPrefix("env=") && $0.contains("ONLY=this") && !$0.contains("HOME=") })
        #expect(texts.contains("/tmp"))
        let err = r.lines.withLock { $0.first { $0.stream == .stderr } }
        #expect(err?.text == "oops" && err?.priority == 3)
    }

    @Test("signal dispositions are reset: a child of a process ignoring SIGTERM still dies of it")
    func signalsReset() async throws {
        signal(SIGTERM, SIG_IGN)  // as taskd does for itself
        defer { signal(SIGTERM, SIG_DFL) }
        let r = Recorder()
        let p = try r.spawn(["/bin/sleep", "30"])
        try await Task.sleep(for: .milliseconds(50))
        p.signalGroup(SIGTERM)
        #expect(await r.termination() == .signaled(SIGTERM))
    }

    @Test("the command leads its own process group, and SIGKILL to the group takes its children too")
    func groupKill() async throws {
        ProcessReaper.shared.becomeSubreaper()  // as taskd does: orphans come back to be reaped
        let r = Recorder()
        let p = try r.spawn(["/bin/sh", "-c", "trap '' TERM; sleep 300 & sleep 300 & echo started; wait"])
        #expect(getpgid(p.pid) == p.pid)
        while r.texts.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        p.signalGroup(SIGTERM)
        try await Task.sleep(for: .milliseconds(100))
        #expect(kill(p.pid, 0) == 0)  // trapped TERM: still alive
        p.signalGroup(SIGKILL)
        #expect(await r.termination() == .signaled(SIGKILL))
        // The orphaned sleeps were killed with the group and reaped: nothing of the group is left.
        // The reaper forgets the group once `waitpid` finds nothing of it (just after the last reap).
        var gone = false
        var forgotten = false
        for _ in 0..<200 where !(gone && forgotten) {
            gone = kill(-p.pid, 0) != 0 && errno == ESRCH
            forgotten = !ProcessReaper.shared.lingeringGroups.contains(p.pid)
            if !(gone && forgotten) { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(gone)
        #expect(forgotten)
    }

    @Test("SIGKILL stops the watch on the pipes; what they hold unread is still delivered before the exit")
    func killLeavesPipesToTheExit() async throws {
        // The loop is held in a handler of our own, so that nothing the command writes is read
        // before the kill: it must come from the drain at the leader's exit.
        final class Hold: Sendable { let held = Atomic(false), release = Atomic(false) }
        let hold = Hold()
        var gate: [Int32] = [-1, -1]
        #expect(pipe(&gate) == 0)
        defer { close(gate[0]); close(gate[1]) }
        let token = try #require(
            EventLoop.shared.register(fd: gate[0], events: EventLoop.readable) { _ in
                hold.held.store(true, ordering: .sequentiallyConsistent)
                while !hold.release.load(ordering: .sequentiallyConsistent) { usleep(1000) }
            })
        defer { EventLoop.shared.deregister(fd: gate[0], token: token) }
        #expect(write(gate[1], "x", 1) == 1)
        while !hold.held.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(1)) }

        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("taskd-kill-\(getpid())").path
        defer { unlink(marker) }
        let r = Recorder()
        let p = try r.spawn([
            "/bin/sh", "-c", "trap '' TERM; echo one; echo two >&2; printf three; : > \"$0\"; exec sleep 300", marker,
        ])
        #expect(p.watchedPipes == 3, "stdout, stderr and the notify pipe")
        while access(marker, F_OK) != 0 { try await Task.sleep(for: .milliseconds(5)) }
        p.signalGroup(SIGKILL)
        #expect(p.watchedPipes == 0)
        #expect(r.texts.isEmpty)  // nothing read yet: the loop is held
        hold.release.store(true, ordering: .sequentiallyConsistent)
        #expect(await r.termination() == .signaled(SIGKILL))
        #expect(r.texts.sorted() == ["one", "three", "two"])
    }

    @Test("a program that does not exist is a spawn error naming it")
    func missing() {
        #expect(throws: SpawnError.self) { try Recorder().spawn(["/nonexistent/prog"]) }
        #expect(throws: SpawnError.self) { try Recorder().spawn(["no-such-program-taskd"]) }
    }

    @Test("a bare program name is looked up in the command's PATH")
    func pathLookup() async throws {
        let r = Recorder()
        _ = try r.spawn(["echo", "hi"])
        #expect(await r.termination() == .exited(0))
        #expect(r.texts == ["hi"])
    }

    @Test("a flood of output is metered: the burst passes, the rest is read, dropped and counted once")
    func flood() async throws {
        let r = Recorder()
        _ = try r.spawn(
            ["/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line$i; i=$((i+1)); done; echo '<3>err' >&2"],
            limit: OutputRateLimit(interval: .seconds(3600), burst: 100))
        #expect(await r.termination() == .exited(0))
        #expect(r.texts == (0..<100).map { "line\($0)" })
        #expect(r.dropped.withLock { $0 } == [19_901])
    }

    @Test("with the limit off every line passes")
    func unlimited() async throws {
        let r = Recorder()
        _ = try r.spawn(["/bin/sh", "-c", "seq 1 5000"], limit: .off)
        #expect(await r.termination() == .exited(0))
        #expect(r.texts.count == 5000 && r.dropped.withLock { $0 }.isEmpty)
    }

    @Test("UMask= and Nice= apply to the command (no root needed)")
    func umaskAndNice() async throws {
        var identity = ExecIdentity()
        identity.umask = 0o077
        identity.nice = 7
        let r = Recorder()
        _ = try r.spawn(
            ["/bin/sh", "-c", "umask; cut -d' ' -f19 /proc/self/stat; cat /proc/self/stat | cut -d' ' -f5"],
            identity: identity)
        #expect(await r.termination() == .exited(0))
        let texts = r.texts
        #expect(texts.count == 3)
        #expect(texts.first == "0077")
        #expect(texts.dropFirst().first == "7")
        // Still the leader of its own process group: pgrp of `cat` is the shell's pid, not ours.
        #expect(texts.last != String(getpgrp()))
    }

    @Test(
        "User=, Group= and the supplementary groups are set before exec",
        .enabled(if: geteuid() == 0, "changing user needs root"))
    func identityAsRoot() async throws {
        var identity = ExecIdentity()
        identity.uid = 65534
        identity.gid = 65534
        identity.groups = [65534, 4]
        identity.umask = 0o027
        let r = Recorder()
        _ = try r.spawn(["/bin/sh", "-c", "id -u; id -g; id -G; umask; pwd"], cwd: "/tmp", identity: identity)
        #expect(await r.termination() == .exited(0))
        #expect(r.texts == ["65534", "65534", "65534 4", "0027", "/tmp"])
    }

    @Test(
        "a step that fails before exec is a spawn error naming the step, and no process is left",
        .enabled(if: geteuid() == 0, "changing user needs root"))
    func identityFailure() async throws {
        var identity = ExecIdentity()
        identity.uid = 65534
        identity.gid = 65534
        identity.groups = []
        // The forked child inherits the spawning thread's name and keeps it, as it never reaches exec; a
        // unique name tells it apart from other suites' children (a `waitpid(-1)` here would reap theirs).
        let marker = "taskd-stepfail"
        let comm = "/proc/thread-self/comm"
        let saved = try String(contentsOfFile: comm, encoding: .utf8)
        try marker.write(toFile: comm, atomically: false, encoding: .utf8)
        // /root is 0700: the new user cannot enter it, and chdir runs as the new user.
        let result = Result { try Recorder().spawn(["/bin/true"], cwd: "/root", identity: identity) }
        try saved.write(toFile: comm, atomically: false, encoding: .utf8)
        #expect(throws: SpawnError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect("\(error)".contains("WorkingDirectory=/root") && "\(error)".contains("Permission denied"))
        }
        #expect(childrenNamed(marker).isEmpty, "the failed child was not reaped")
    }

    /// Our child processes (zombies included) whose name is `comm`, from `/proc/*/stat`.
    private func childrenNamed(_ comm: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { return nil }
            let name = stat[stat.index(after: open)..<close]
            let rest = stat[stat.index(after: close)...].split(separator: " ")
            guard rest.count > 1, Int32(rest[1]) == getpid(), name == comm else { return nil }
            return pid
        }
    }

    @Test("an identity change without root fails at that step", .enabled(if: geteuid() != 0))
    func identityWithoutRoot() {
        var identity = ExecIdentity()
        identity.uid = geteuid() + 1
        #expect(throws: SpawnError.self) { try Recorder().spawn(["/bin/true"], identity: identity) }
    }

    @Test(
        "fd 3 is the notify pipe, with and without a change of identity: its lines are notifications, never output; fd 4 is closed",
        arguments: [false, true])
    func notifyDescriptor(changesIdentity: Bool) async throws {
        var identity = ExecIdentity()
        if changesIdentity { identity.umask = 0o022 }  // fork and exec through the shim
        let r = Recorder()
        _ = try r.spawn(
            [
                "/bin/sh", "-c",
                "echo PROGRESS=1/3 >&3; echo out; echo STATUS=half way >&3; "
                    + "if { true >&4; } 2>/dev/null; then echo fd4-open; fi",
            ], identity: identity, limit: OutputRateLimit(interval: .seconds(10), burst: 1))
        #expect(await r.termination() == .exited(0))
        #expect(r.notifications.withLock { $0 } == ["PROGRESS=1/3", "STATUS=half way"])
        #expect(r.texts == ["out"], "notifications are not output, nor counted by its rate limit; fd 4 is closed")
    }
}
