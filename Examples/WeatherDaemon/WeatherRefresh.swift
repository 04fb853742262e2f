import Taskd

#if canImport(Glibc)
    import Glibc
#endif

/// The example's handler: "downloads" a forecast in steps, and stops cleanly when taskd cancels
/// it (at budget − CancelGraceSec) through `withTaskCancellationHandler`.
enum WeatherRefresh {
    static func run(_ context: TaskContext) async throws {
        // The payload chooses how long the pretend download takes: {"steps": 20} → 2 s.
        let steps = context.payload.flatMap(Self.steps(in:)) ?? 5
        try await withTaskCancellationHandler {
            for step in 1...steps {
                try await Task.sleep(for: .milliseconds(100))
                if step % 10 == 0 { say("\(context.task): step \(step) of \(steps)") }
            }
            say(
                "\(context.task): forecast refreshed in \(steps) steps (run \(context.runID), trigger \(context.trigger))"
            )
        } onCancel: {
            // Runs synchronously on the cancelling thread: keep it short and thread-safe.
            say("\(context.task): cancelled by taskd; saving partial forecast")
            if let marker = getenv("WEATHERD_CANCEL_MARKER") {
                // Tests read when onCancel ran: CLOCK_REALTIME microseconds, written here.
                var now = timespec()
                clock_gettime(CLOCK_REALTIME, &now)
                let text = "\(Int(now.tv_sec) * 1_000_000 + now.tv_nsec / 1_000)\n"
                let fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                if fd >= 0 {
                    _ = text.withCString { write(fd, $0, strlen($0)) }
                    close(fd)
                }
            }
        }
    }

    static func steps(in payload: String) -> Int? {
        guard let key = payload.split(separator: "\"steps\":", maxSplits: 1).dropFirst().first else { return nil }
        return Int(key.drop { $0 == " " }.prefix { $0.isNumber })
    }

    static func say(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }
}
