import Taskd

// weatherd: an app that builds its own daemon binary and declares its tasks in code, the way a
// SwiftUI app declares `.backgroundTask(.appRefresh("WEATHER_DATA")) { … }`. Run it like taskd:
//   swift run weatherd --config Examples/WeatherDaemon/config
//   .build/debug/taskctl wake WEATHER_DATA --wait
await TaskDaemon(name: "weatherd", version: "1.0.0")
    .backgroundTask(
        .appRefresh("WEATHER_DATA", payload: RefreshRequest.self, result: Forecast.self),
        description: "Refresh the weather forecast",
        budget: .seconds(30), cancelGrace: .seconds(5), every: .seconds(900)
    ) { context in
        try await WeatherRefresh.run(context)
    }
    .run()
