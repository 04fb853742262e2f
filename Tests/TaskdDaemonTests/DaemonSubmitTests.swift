import TaskScheduling
import TaskdConfig
import TaskdProtocol
import Testing

@testable import TaskdDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// `Submit` on the manual daemon: a transient task runs its command as its submitter at its time,
/// is removed once spent or cancelled, and is refused, with the reason, to whoever may not submit
/// or asks to run as someone else.
@Suite("Daemon on manual ports: submitted tasks", .timeLimit(.minutes(1)))
struct DaemonSubmitTests {
    typealias F = ManualDaemonFixture
    typealias Submit = SchedulerInterface.Submit.Parameters

    static let user: UInt32 = geteuid() == 4242 ? 4343 : 4242
    static let peer = PeerCredentials(pid: 7, uid: user, gid: user, groups: [user])

    /// A daemon whose `SubmitUsers=` lists `user`, with one configured task.
    static func daemon() async -> F {
        var settings = F.settings()
        settings.submitAccess = AccessList(users: [user])
        return await F([F.task("fetch")], settings: settings)
    }

    /// The reason `body` was refused, or nil if it was not.
    static func refusal(_ body: () async throws -> Void) async -> DaemonError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? DaemonError
        }
    }

    @Test(
        "submit --in 2s runs the command at its time, as its submitter, then the task is gone",
        .enabled(if: geteuid() == 0, "taskd runs a command as another user only as root"))
    func runsOnceAsItsSubmitter() async throws {
        let f = await Self.daemon()
        let submittedAt = f.clock.now().realtime
        let task = try await f.daemon.submit(
            Submit(command: ["/bin/echo", "hello world"], name: "hello", inUSec: 2_000_000), peer: Self.peer)
        #expect(task.kind == "submitted" && task.name == "hello")
        #expect(task.nextElapseUSec == submittedAt + 2_000_000)
        #expect(try await f.onLoop { $0.list() }.map(\.name) == ["fetch", "hello"])
        await f.advance(by: .milliseconds(1_999))
        #expect(f.started("hello").isEmpty)
        await f.advance(by: .milliseconds(1))
        let run = try #require(f.started("hello").first)
        #expect(run.trigger == .timer && run.scheduledRealtime == submittedAt + 2_000_000)
        let spec = try #require(f.launcher.specs[run.id])
        #expect(spec.argv == ["/bin/echo", "hello world"])
        #expect(spec.identity.uid == Self.user && spec.identity.gid == Self.user)
        await f.end(run.id)
        await #expect(throws: TargetError.self) { try await f.status("submitted:hello") }
        let notes = f.entries(.taskSubmitted).map { $0["MESSAGE"] ?? "" }
        #expect(notes.count == 2 && notes[1].contains("spent"))
        #expect(f.entries(.runCompleted).contains { $0["TASK"] == "hello" && $0["TASK_KIND"] == "submitted" })
    }

    @Test("who may submit: root and taskd's user always, others only when SubmitUsers= lists them")
    func access() async throws {
        let f = await F([F.task("fetch")])
        let stranger = PeerCredentials(pid: 8, uid: Self.user, gid: Self.user)
        let denied = await Self.refusal {
            _ = try await f.daemon.submit(Submit(command: ["/bin/true"]), peer: stranger)
        }
        guard case .permissionDenied(let reason)? = denied else {
            Issue.record("not refused: \(String(describing: denied))")
            return
        }
        #expect(reason.contains("SubmitUsers="))
        let task = try await f.daemon.submit(Submit(command: ["/bin/true"]), peer: F.root)
        #expect(task.name.hasPrefix("run-") && task.name.count == 12)
    }

    @Test(
        "a caller other than root cannot ask to run as another user or group",
        .enabled(if: geteuid() == 0, "taskd runs a command as another user only as root"))
    func noOtherIdentity() async throws {
        let f = await Self.daemon()
        for property in ["User=0", "Group=0", "User=\(Self.user + 1)", "SupplementaryGroups=0"] {
            let denied = await Self.refusal {
                _ = try await f.daemon.submit(Submit(command: ["/bin/true"], properties: [property]), peer: Self.peer)
            }
            guard case .permissionDenied(let reason)? = denied else {
                Issue.record("\(property) not refused: \(String(describing: denied))")
                continue
            }
            #expect(reason.contains("another user or group"))
        }
        // Its own uid is allowed; root may name anyone.
        _ = try await f.daemon.submit(
            Submit(command: ["/bin/true"], name: "own", properties: ["User=\(Self.user)"]), peer: Self.peer)
        _ = try await f.daemon.submit(
            Submit(command: ["/bin/true"], name: "root", properties: ["User=\(Self.user)"]), peer: F.root)
        #expect(try await f.onLoop { $0.list() }.count == 3)
    }

    @Test("bad settings are refused with the key and the reason; nothing is added")
    func badSettings() async throws {
        let f = await Self.daemon()
        let cases: [(Submit, String)] = [
            (Submit(command: ["/bin/true"], properties: ["NoSuchKey=1"]), "NoSuchKey"),
            (Submit(command: ["/bin/true"], properties: ["OnSuccess=fetch"]), "OnSuccess"),
            (Submit(command: ["/bin/true"], properties: ["RuntimeBudgetSec=soon"]), "RuntimeBudgetSec"),
            (Submit(command: ["relative/tool"]), "absolute path"),
            (Submit(command: ["/bin/true"], calendar: "2001-01-01 00:00:00"), "no elapse to come"),
        ]
        for (request, named) in cases {
            let refused = await Self.refusal { _ = try await f.daemon.submit(request, peer: F.root) }
            guard case .invalidRequest(let reason)? = refused else {
                Issue.record("\(request) not refused: \(String(describing: refused))")
                continue
            }
            #expect(reason.contains(named), "\(reason)")
        }
        #expect(try await f.onLoop { $0.list() }.map(\.name) == ["fetch"])
    }

    @Test("a name is taken until its task is gone")
    func nameTaken() async throws {
        let f = await Self.daemon()
        _ = try await f.daemon.submit(Submit(command: ["/bin/true"], name: "once", inUSec: 60_000_000), peer: F.root)
        let again = await Self.refusal {
            _ = try await f.daemon.submit(Submit(command: ["/bin/true"], name: "once"), peer: F.root)
        }
        guard case .invalidRequest(let reason)? = again else {
            Issue.record("not refused: \(String(describing: again))")
            return
        }
        #expect(reason.contains("submitted:once exists"))
    }

    @Test("a calendar task stays after its runs; cancel withdraws it, and a reload keeps the others")
    func calendarAndCancel() async throws {
        let f = await Self.daemon()
        _ = try await f.daemon.submit(
            Submit(command: ["/bin/true"], name: "every", calendar: "*:*:0/10"), peer: F.root)
        _ = try await f.daemon.submit(
            Submit(command: ["/bin/true"], name: "later", inUSec: 3_600_000_000), peer: F.root)
        await f.advance(by: .seconds(10))
        let run = try #require(f.started("every").first)
        await f.end(run.id)
        #expect(try await f.status("submitted:every").nextElapseUSec != nil)
        _ = try await f.onLoop { try $0.cancel(target: "submitted:every", peer: F.root) }
        await #expect(throws: TargetError.self) { try await f.status("submitted:every") }
        _ = await f.daemon.reload()
        #expect(try await f.onLoop { $0.list() }.map(\.name) == ["fetch", "later"])
    }

    @Test("cancelling a submitted task's run cancels it and withdraws the task")
    func cancelRunning() async throws {
        let f = await Self.daemon()
        _ = try await f.daemon.submit(Submit(command: ["/bin/sleep", "60"], name: "long"), peer: F.root)
        await f.advance(by: .milliseconds(1))
        let run = try #require(f.started("long").first)
        let cancelled = try await f.onLoop { try $0.cancel(target: "submitted:long", peer: F.root) }
        #expect(cancelled.map(\.runId) == [run.id])
        await #expect(throws: TargetError.self) { try await f.status("submitted:long") }
        await f.end(run.id, .signaled(15))
        #expect(f.entries(.runCancelled).contains { $0["TASK"] == "long" && $0["TASK_KIND"] == "submitted" })
    }

    @Test("cancelling one run of a calendar task by its id cancels that run; the task stays")
    func cancelByRunID() async throws {
        let f = await Self.daemon()
        _ = try await f.daemon.submit(
            Submit(command: ["/bin/sleep", "60"], name: "every", calendar: "*:*:0/10", properties: ["Overlap=queue"]),
            peer: F.root)
        await f.advance(by: .seconds(10))
        let running = try #require(f.started("every").first)
        await f.advance(by: .seconds(10))
        // The second elapse waits behind the first run: cancelled by its id, it is gone at once.
        let queued = try #require(try await f.status("submitted:every").queue.first)
        let cancelled = try await f.onLoop { try $0.cancel(target: queued.runId, peer: F.root) }
        #expect(cancelled.map(\.runId) == [queued.runId])
        #expect(try await f.status("submitted:every").nextElapseUSec != nil)
        _ = try await f.onLoop { try $0.cancel(target: running.id, peer: F.root) }
        await f.end(running.id, .signaled(15))
        #expect(try await f.status("submitted:every").nextElapseUSec != nil)
    }
}
