import WeatherKit

// weatherd: an app that builds its own daemon binary and declares its tasks in code, the way a
// SwiftUI app declares `.backgroundTask(.appRefresh("WEATHER_DATA")) { … }` (see `Weather`).
// Run it like taskd:
//   swift run weatherd --config Examples/WeatherDaemon/config --socket weatherd.sock
//   .build/debug/taskctl --socket weatherd.sock wake WEATHER_DATA --wait
// (without --socket it listens on its own default, /run/weatherd/weatherd.sock as root, which it
// prints with the taskctl command that reaches it).
await Weather.daemon().run()
