import TaskScheduling

/// Names a background task the way SwiftUI's `BackgroundTask` does: `.appRefresh("WEATHER_DATA")`.
public struct BackgroundTask: Hashable, Sendable {
    public var kind: String
    public var identifier: String

    public init(kind: String, identifier: String) {
        self.kind = kind
        self.identifier = identifier
    }

    /// A short refresh task (default budget 30 s, as on iOS).
    public static func appRefresh(_ identifier: String) -> BackgroundTask {
        BackgroundTask(kind: TaskKind.appRefresh, identifier: identifier)
    }

    /// A longer maintenance task (default budget 10 min).
    public static func processing(_ identifier: String) -> BackgroundTask {
        BackgroundTask(kind: TaskKind.processing, identifier: identifier)
    }

    var key: TaskKey { TaskKey(kind: kind, identifier: identifier) }
}
