import Taskd

#if canImport(Glibc)
    import Glibc
#endif

/// What a wake of WEATHER_DATA may ask for: `taskctl wake WEATHER_DATA --payload '{"city": "Paris", "steps": 20}'`.
public struct RefreshRequest: Codable, Sendable {
    /// How long the pretend download takes, in steps of 100 ms (default 5).
    public var steps: Int?
    public var city: String?

    public init(city: String? = nil, steps: Int? = nil) {
        self.city = city
        self.steps = steps
    }
}

/// What a run returns; `taskctl status WEATHER_DATA` and `wake --wait --json` show it.
public struct Forecast: Codable, Hashable, Sendable {
    public var city: String
    public var steps: Int
    public var attempt: Int

    public init(city: String, steps: Int, attempt: Int) {
        self.city = city
        self.steps = steps
        self.attempt = attempt
    }
}

/// The example's handler: "downloads" a forecast in steps, and stops cleanly when taskd cancels
/// it (at budget − CancelGraceSec) through `withTaskCancellationHandler`.
public enum WeatherRefresh {
    public static func run(_ context: TaskContext<RefreshRequest>) async throws -> Forecast {
        let steps = context.payload?.steps ?? 5
        let city = context.payload?.city ?? "Paris"
        if city.isEmpty { throw PermanentFailure("no city given") }
        return try await withTaskCancellationHandler {
            for step in 1...steps {
                try await Task.sleep(for: .milliseconds(100))
                if step % 10 == 0 { say("\(context.task): step \(step) of \(steps)") }
            }
            say(
                "\(context.task): forecast refreshed in \(steps) steps (run \(context.runID), trigger \(context.trigger))"
            )
            return Forecast(city: city, steps: steps, attempt: context.attempt)
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

    static func say(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }
}
