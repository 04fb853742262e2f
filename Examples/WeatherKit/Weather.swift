import Taskd

/// The weather app's tasks, declared in code as a SwiftUI app declares them: `weatherd` runs them,
/// and its tests drive them with `TaskdTesting`.
public enum Weather {
    /// The daemon with the app's tasks registered.
    public static func daemon() -> TaskDaemon {
        TaskDaemon(name: "weatherd", version: "1.0.0")
            .backgroundTask(
                .appRefresh("WEATHER_DATA", payload: RefreshRequest.self, result: Forecast.self),
                description: "Refresh the weather forecast",
                budget: .seconds(30), cancelGrace: .seconds(5), every: .seconds(900)
            ) { context in
                try await WeatherRefresh.run(context)
            }
    }
}
