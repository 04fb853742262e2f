import WeatherKit

// weatherd: an app that builds its own daemon binary and declares its tasks in code, the way a
// SwiftUI app declares `.backgroundTask(.appRefresh("WEATHER_DATA")) { … }` (see `Weather`).
// Run it like taskd:
//   swift run weatherd --config Examples/WeatherDaemon/config
//   .build/debug/taskctl wake WEATHER_DATA --wait
await Weather.daemon().run()
