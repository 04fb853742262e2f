import Foundation
import TaskScheduling
import Testing

@testable import TaskRuntime

/// The run keeper (the real `taskd-keeper` built beside the tests): it spawns commands, reports
/// their exits, and gives a second connection (a taskd that starts after one was killed) the runs
/// it holds, their pipes and the status of those that ended.
@Suite("Run keeper: real taskd-keeper, real processes", .serialized)
struct RunKeeperTests {
    /// A state folder of its own, and the keeper binary beside the test bundle.
    static func folder() throws -> (String, String) {
        let executable = try #require(
            RunKeeper.locate(beside: Bundle.main.bundlePath + "/x")
                ?? RunKeeper.locate(beside: CommandLine.arguments[0]),
            "taskd-keeper is built beside the tests")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("keeper-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (dir, executable)
    }

    @Test("the keeper is found beside the daemon, in libexec/NAME/ for an app daemon, or in libexec/taskd/")
    func locates() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("locate-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        func place(_ path: String) throws {
            try FileManager.default.createDirectory(
                atPath: root + "/" + path.dropLast("/taskd-keeper".count), withIntermediateDirectories: true)
            #expect(
                FileManager.default.createFile(
                    atPath: root + "/" + path, contents: Data(), attributes: [.posixPermissions: 0o755]))
        }
        try FileManager.default.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
        #expect(RunKeeper.locate(beside: root + "/bin/weatherd") == nil)
        try place("libexec/taskd/taskd-keeper")
        #expect(RunKeeper.locate(beside: root + "/bin/weatherd") == root + "/bin/../libexec/taskd/taskd-keeper")
        try place("libexec/weatherd/taskd-keeper")
        #expect(RunKeeper.locate(beside: root + "/bin/weatherd") == root + "/bin/../libexec/weatherd/taskd-keeper")
        try place("bin/taskd-keeper")
        #expect(RunKeeper.locate(beside: root + "/bin/weatherd") == root + "/bin/taskd-keeper")
    }

    @Test("a command spawned by the keeper: output, notify lines, exit status, spawn errors named")
    func spawns() async throws {
        let (dir, executable) = try Self.folder()
        let keeper = try RunKeeper.start(stateDirectory: dir, executable: executable).get()
        defer { keeper.quit() }
        // Its own pid, not that of the taskd that made the listening socket (the peer credentials').
        let pid = try #require(keeper.pid)
        #expect(pid != getpid() && kill(pid, 0) == 0)
        let r = Recorder()
        _ = try r.spawn(
            ["/bin/sh", "-c", "echo one; echo PROGRESS=0.5 >&3; echo two >&2; exit 5"], keeper: keeper, runID: "r1")
        #expect(await r.termination() == .exited(5))
        #expect(Set(r.texts) == ["one", "two"])
        #expect(r.notifications.withLock { $0 } == ["PROGRESS=0.5"])
        let error = #expect(throws: SpawnError.self) {
            try Recorder().spawn(["/nonexistent/cmd"], keeper: keeper, runID: "r2")
        }
        #expect(error?.message == "/nonexistent/cmd: No such file or directory")
    }

    @Test(
        "a second connection gets the runs held, with what taskd gave at the spawn: one still running and one that ended meanwhile"
    )
    func handsOverRuns() async throws {
        let (dir, executable) = try Self.folder()
        let first = try RunKeeper.start(stateDirectory: dir, executable: executable).get()
        let gate = dir + "/gate"
        let running = Recorder()
        let long = try running.spawn(
            ["/bin/sh", "-c", "echo started; while [ ! -e \(gate) ]; do sleep 0.02; done; echo after; exit 3"],
            keeper: first, runID: "long", snapshot: Array(#"{"id":"long"}"#.utf8))
        let closed = dir + "/closed"
        let short = try Recorder().spawn(
            ["/bin/sh", "-c", "while [ ! -e \(closed) ]; do sleep 0.02; done; echo bye; exit 4"], keeper: first,
            runID: "short")
        // A wake joined `long`: what the keeper keeps with it is replaced.
        first.note(long.pid, snapshot: Array(#"{"id":"long","records":2}"#.utf8))
        // As if this taskd were killed: it reads no more of the runs' pipes, its connection closes,
        // and `short` ends while no taskd is there.
        for process in [long, short] { process.handOff().pipes.forEach { close($0.fd) } }
        close(first.descriptor)
        #expect(FileManager.default.createFile(atPath: closed, contents: nil))
        while kill(short.pid, 0) == 0 { try await Task.sleep(for: .milliseconds(20)) }
        // A new taskd connects: the keeper still holds both runs (neither end was recorded).
        let second = try #require(RunKeeper.connect(stateDirectory: dir))
        defer { second.quit() }
        let kept = second.kept().sorted { $0.runID < $1.runID }
        #expect(kept.map(\.runID) == ["long", "short"])
        #expect(kept.map(\.pid) == [long.pid, short.pid])
        #expect(kept[0].waitStatus == nil && kept[1].waitStatus.map { ($0 >> 8) & 0xff } == 4)
        #expect(kept.allSatisfy { $0.pipes.count == 3 })
        // What taskd gave with the spawn (then noted) comes back whole; a run spawned without gives nothing.
        #expect(
            kept[0].snapshot.map { String(decoding: $0, as: UTF8.self) } == #"{"id":"long","records":2}"#
                && kept[1].snapshot == nil)
        let adopted = Recorder()
        adopted.adopt(kept[0], keeper: second)
        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        #expect(await adopted.termination() == .exited(3))
        #expect(adopted.texts.last == "after")
        for pipe in kept[1].pipes { close(pipe) }
    }

    @Test(
        "the keeper writes a run's lines and only then takes them out of the pipe: across a change of taskd, each line once, in order"
    )
    func writesOutput() async throws {
        let (dir, keeperPath) = try Self.folder()
        // The keeper writes text records to its standard error: a file here.
        let wrapper = dir + "/keeper.sh"
        let out = dir + "/out"
        #expect(
            FileManager.default.createFile(
                atPath: wrapper, contents: Data("#!/bin/sh\nexec '\(keeperPath)' 2>>'\(out)'\n".utf8),
                attributes: [.posixPermissions: 0o755]))
        let first = try RunKeeper.start(stateDirectory: dir, executable: wrapper).get()
        #expect(first.writesOutput)
        let kept = KeptOutput(
            records: { outputs in
                let lines = outputs.compactMap { output -> [UInt8]? in
                    guard case .line(let line) = output else { return nil }
                    return Array("\(line.stream.rawValue) \(line.text)\n".utf8)
                }
                return (lines, true)
            }, afterOwnEntries: { $0() })
        let r = Recorder()
        // 3,000 lines without a pause: the change of taskd below falls in the middle of them, with
        // lines read and not yet written, and a request with the keeper.
        let process = try r.spawn(
            [
                "/bin/sh", "-c",
                "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo $i; echo PROGRESS=$i >&3; done; printf 3001; echo e >&2; exit 0",
            ], keeper: first, runID: "kept", keptOutput: kept)
        func written() -> [String] {
            (try? String(contentsOfFile: out, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while !written().contains("stdout 100") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        try #require(written().contains("stdout 100"), "the keeper wrote the first 100 lines")
        // This taskd stops reading and its connection closes; the next one connects and takes the run over.
        let pipes = process.handOff().pipes
        close(first.descriptor)
        #expect(r.texts.isEmpty, "the lines go to the keeper, not to onOutput")
        let second = try #require(RunKeeper.connect(stateDirectory: dir))
        defer { second.quit() }
        let held = try #require(second.kept().first)
        pipes.forEach { close($0.fd) }
        let adopted = Recorder()
        adopted.adopt(held, keeper: second, keptOutput: kept)
        #expect(await adopted.termination() == .exited(0))
        let lines = written()
        let stdout = lines.filter { $0.hasPrefix("stdout ") }
        #expect(
            stdout == (1...3001).map { "stdout \($0)" }, "\(Self.difference(stdout, from: "stdout ", through: 3001))")
        #expect(lines.filter { $0.hasPrefix("stderr ") } == ["stderr e"])
        #expect(adopted.texts.isEmpty)
        // Notify lines go to taskd (`onOutput`), at least once across the change, none lost.
        let notified = r.notifications.withLock { $0 } + adopted.notifications.withLock { $0 }
        #expect(
            Set(notified) == Set((1...3000).map { "PROGRESS=\($0)" }) && notified.count <= 3000 + 128,
            "at least once, at most one request's lines twice: \(Self.difference(notified, from: "PROGRESS=", through: 3000))"
        )
    }

    /// How `lines` (each `prefix` and a number) differ from 1 through `n` once each, in order.
    static func difference(_ lines: [String], from prefix: String, through n: Int) -> String {
        let numbers = lines.compactMap { Int($0.dropFirst(prefix.count)) }
        let seen = Dictionary(numbers.map { ($0, 1) }, uniquingKeysWith: +)
        let missing = (1...n).filter { seen[$0] == nil }
        let twice = seen.filter { $0.value > 1 }.keys.sorted()
        let disorder = zip(numbers, numbers.dropFirst()).filter { $0 >= $1 }.prefix(10).map { "\($0)→\($1)" }
        return "\(lines.count) lines; missing \(missing.count): \(missing.prefix(40)); more than once \(twice.count): "
            + "\(twice.prefix(40)); out of order: \(disorder)"
    }
}
