import TaskScheduling

/// Names a background task the way SwiftUI's `BackgroundTask<Request, Response>` does:
/// `.appRefresh("WEATHER_DATA")` takes no payload and returns nothing;
/// `.appRefresh("FORECAST", payload: City.self, result: Forecast.self)` decodes each wake's JSON
/// payload into `City` and shows the `Forecast` it returns in `taskctl status` and `wake --wait`.
public struct BackgroundTask<Payload: Sendable, Result: Sendable>: Hashable, Sendable {
    public var kind: String
    public var identifier: String

    public init(kind: String, identifier: String) {
        self.kind = kind
        self.identifier = identifier
    }

    var key: TaskKey { TaskKey(kind: kind, identifier: identifier) }
}

extension BackgroundTask where Payload == Void, Result == Void {
    /// A short refresh task (default budget 30 s, as on iOS).
    public static func appRefresh(_ identifier: String) -> Self {
        Self(kind: TaskKind.appRefresh, identifier: identifier)
    }

    /// A longer maintenance task (default budget 10 min).
    public static func processing(_ identifier: String) -> Self {
        Self(kind: TaskKind.processing, identifier: identifier)
    }
}

extension BackgroundTask where Payload: Decodable, Result: Encodable {
    /// A refresh task whose wakes carry a `Payload` and whose runs return a `Result`.
    public static func appRefresh(_ identifier: String, payload: Payload.Type, result: Result.Type) -> Self {
        Self(kind: TaskKind.appRefresh, identifier: identifier)
    }

    /// A maintenance task whose wakes carry a `Payload` and whose runs return a `Result`.
    public static func processing(_ identifier: String, payload: Payload.Type, result: Result.Type) -> Self {
        Self(kind: TaskKind.processing, identifier: identifier)
    }
}
