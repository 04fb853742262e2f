import Foundation
import Testing

@testable import TaskRuntime
@testable import TaskScheduling

/// A cgroup v2 folder of the test's own, where this process may make one (root, a writable
/// hierarchy): nil elsewhere, and the tests that need it say so.
private func scratchCgroup() -> String? {
    guard geteuid() == 0, let own = RunCgroups.ownCgroup() else { return nil }
    let path = own + "/taskd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    return mkdir(path, 0o755) == 0 ? path : nil
}

@Suite("Run cgroups: accounting, and a command that escapes its process group", .serialized)
struct RunCgroupTests {
    @Test("without a cgroup, the leader's rusage: CPU time is there and plausible; no peak memory")
    func rusage() async throws {
        let r = Recorder()
        _ = try r.spawn(["/bin/sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
        #expect(await r.termination() == .exited(0))
        let usage = try #require(r.usage.withLock { $0 })
        #expect(usage.source == "rusage")
        #expect((usage.cpuUSec ?? 0) > 1_000 && (usage.cpuUSec ?? 0) < 60_000_000, "\(usage)")
        #expect(usage.memoryPeakBytes == nil, "a vfork child's ru_maxrss is its spawner's")
    }

    @Test(
        "in a cgroup: a setsid'd grandchild that ignores SIGTERM is killed with the run, and the run ends when the cgroup is empty",
        .enabled(if: geteuid() == 0 && RunCgroups.ownCgroup() != nil, "needs root and a writable cgroup v2 hierarchy"))
    func containment() async throws {
        let parent = try #require(scratchCgroup())
        defer { rmdir(parent) }
        var unapplied: [String] = []
        let cgroup = try RunCgroup(parent: parent, name: "run-1", limits: ResourceLimits(), unapplied: &unapplied)
        let pidFile = NSTemporaryDirectory() + "taskd-escapee-\(getpid())"
        defer { unlink(pidFile) }
        let r = Recorder()
        let process = try r.spawn(
            ["/bin/sh", "-c", "setsid sh -c 'trap \"\" TERM; echo $$ > \(pidFile); sleep 300' & sleep 300"],
            cgroup: cgroup)
        var escapee: pid_t = 0
        for _ in 0..<500 where escapee == 0 {
            escapee = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmed) } ?? 0
            if escapee == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(escapee > 0 && getpgid(escapee) != process.pid, "it left the run's process group")
        #expect(cgroup.pids.contains(escapee) && cgroup.pids.contains(process.pid))
        process.signalGroup(SIGTERM)  // the escapee ignores it; the leader's shell dies of it
        process.signalGroup(SIGKILL)
        #expect(await r.termination() != nil)
        #expect(kill(escapee, 0) != 0 || Self.isZombie(escapee), "no process of the run is left")
        #expect(!FileManager.default.fileExists(atPath: cgroup.path), "the empty cgroup was removed")
        let usage = try #require(r.usage.withLock { $0 })
        #expect(usage.source == "cgroup" && (usage.cpuUSec ?? 0) > 0, "\(usage)")
    }

    /// A zombie is dead already: only its parent's wait is missing.
    static func isZombie(_ pid: pid_t) -> Bool {
        ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "").contains(") Z ")
    }

    @Test("cgroupfs fields: `name value` lines and `name=value` words")
    func fields() {
        #expect(RunCgroup.field("populated 1\nfrozen 0\n", "populated") == 1)
        #expect(RunCgroup.field("usage_usec 1234\nuser_usec 1000\n", "usage_usec") == 1234)
        #expect(RunCgroup.field("8:0 rbytes=4096 wbytes=512 rios=1", "wbytes") == 512)
        #expect(RunCgroup.field("low 0\noom_kill 2\n", "oom_kill") == 2)
        #expect(RunCgroup.field("", "populated") == 0)
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
