import Taskd

#if canImport(Glibc)
    import Glibc
#endif

// taskd-faults: Swift handlers that misbehave, for the reliability tests (Tests/integration/
// test_faults.py). taskd must report each and keep serving everyone else.
//   stubborn   never checks cancellation: blocks the thread it starts on (taskd's loop thread, which the
//              standby thread takes over) for 6 s (budget 1 s, grace 0.5 s), so it is abandoned at its
//              budget's end and its late return is ignored
//   slowCancel its onCancel blocks its thread for 3 s (budget 1 s, grace 0.5 s): taskd must not be the
//              thread it blocks
//   thrower    throws an error of its own
//   fine       returns at once (the bystander)
//   chatty     reports progress about 10,000 times a second for 2 s, with a status every 1,000th
//   silent     reports nothing; ProgressTimeoutSec 1 s cancels it (budget 30 s)
//   chain      asks for its next run one hour after each wake (scheduleNext), which a restart keeps
//   patient    sleeps 30 s, cancellable: an upgrade cuts it short (TASKD_FAULTS_PATIENT: 1 s after start-up)
//   steps      with TASKD_FAULTS_STEPS="LOG COUNT": COUNT steps, each appended to LOG (its work), then
//              checkpointed, 3 ms apart; a run resumes from the last checkpoint; returns the steps' sum
//              (the checkpoint tests: Tests/e2e/test_checkpoint_e2e.py)

struct Broken: Error, CustomStringConvertible {
    var description: String { "the upstream service answered 503" }
}

await TaskDaemon(name: "taskd-faults")
    .backgroundTask(.processing("stubborn"), budget: .seconds(1), cancelGrace: .milliseconds(500)) { _ in
        for _ in 0..<60 { usleep(100_000) }  // ignores cancellation, and blocks its thread
    }
    .backgroundTask(.processing("slowCancel"), budget: .seconds(1), cancelGrace: .milliseconds(500)) { _ in
        await withTaskCancellationHandler {
            try? await Task.sleep(for: .seconds(10))
        } onCancel: {
            for _ in 0..<30 { usleep(100_000) }
        }
    }
    .backgroundTask(.processing("thrower")) { _ in throw Broken() }
    .backgroundTask(.appRefresh("fine")) { _ in }
    .backgroundTask(.processing("chatty"), budget: .seconds(30)) { context in
        let total = 20_000
        for n in 1...total {
            context.reportProgress(completed: n, total: total)
            if n % 1_000 == 0 { context.setStatus("batch \(n / 1_000)") }
            usleep(100)
        }
    }
    .backgroundTask(.appRefresh("chain")) { context in
        if context.trigger == .wake { context.scheduleNext(after: .seconds(3600)) }
    }
    .backgroundTask(.processing("silent"), budget: .seconds(30), progressTimeout: .seconds(1)) { _ in
        try await Task.sleep(for: .seconds(30))
    }
    // Takes 30 s, unless cancelled (an upgrade cuts it short); with TASKD_FAULTS_PATIENT set, it
    // starts 1 s after start-up, a run no wake asked for.
    .backgroundTask(
        .processing("patient"), budget: .seconds(60),
        onStartup: getenv("TASKD_FAULTS_PATIENT") == nil ? nil : .seconds(1)
    ) { _ in
        try await Task.sleep(for: .seconds(30))
    }
    .backgroundTask(.processing("steps", payload: [String: Int].self, result: Int.self)) { context in
        struct Progress: Codable {
            var step = 0
            var total = 0
        }
        let setting = getenv("TASKD_FAULTS_STEPS").map { String(cString: $0).split(separator: " ") } ?? []
        guard setting.count == 2, let count = Int(setting[1]) else { throw Broken() }
        let log = open(String(setting[0]), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(log) }
        var progress = try context.resumeState(as: Progress.self) ?? Progress()
        while progress.step < count {
            let line = Array("\(progress.step)\n".utf8)
            _ = write(log, line, line.count)
            progress.total = (progress.total * 31 + progress.step) % 1_000_003
            progress.step += 1
            try await context.checkpoint(progress)
            try await Task.sleep(for: .milliseconds(3))
        }
        return progress.total
    }
    .run()
