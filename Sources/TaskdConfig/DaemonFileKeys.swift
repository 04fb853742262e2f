import TaskScheduling

private typealias Value = UnitFileValues

/// The table of `[Daemon] Key=` `taskd.conf` accepts, each with the parser that applies it onto
/// `DaemonSettings`: the same mechanism, value parsers and diagnostics as `TaskFileKeys`.
enum DaemonFileKeys {
    typealias Apply = UnitFileTable<DaemonSettings>.Apply

    static let table = UnitFileTable<DaemonSettings>([
        "Daemon": [
            "StateDirectory": { s, e throws(ConfigDiagnostic) in s.stateDirectory = try Value.absolutePath(e) },
            "Socket": { s, e throws(ConfigDiagnostic) in s.socketPath = try Value.absolutePath(e) },
            "MetricsFile": { s, e throws(ConfigDiagnostic) in s.metricsFile = try Value.absolutePath(e) },
            "AllowUsers": { s, e throws(ConfigDiagnostic) in
                let users = try Identities.append(s.access?.users, e, groups: false)
                s.access = AccessList(users: users, groups: s.access?.groups ?? [])
            },
            "AllowGroups": { s, e throws(ConfigDiagnostic) in
                let groups = try Identities.append(s.access?.groups, e, groups: true)
                s.access = AccessList(users: s.access?.users ?? [], groups: groups)
            },
            "MaxConcurrentRuns": { s, e throws(ConfigDiagnostic) in s.maxConcurrentRuns = try count(e) },
            "MaxConnections": { s, e throws(ConfigDiagnostic) in s.maxConnections = try count(e) },
            "MaxConnectionsPerUser": { s, e throws(ConfigDiagnostic) in s.maxConnectionsPerUser = try count(e) },
            "IdleTimeoutSec": { s, e throws(ConfigDiagnostic) in s.idleTimeout = try timeout(e) },
            "RequestTimeoutSec": { s, e throws(ConfigDiagnostic) in s.requestTimeout = try timeout(e) },
            "SyncIntervalSec": { s, e throws(ConfigDiagnostic) in s.syncInterval = try Value.timeSpan(e, "a time span")
            },
            "WatchSleep": { s, e throws(ConfigDiagnostic) in s.watchSleep = try Value.boolean(e) },
            "RunCgroups": { s, e throws(ConfigDiagnostic) in s.runCgroups = try Value.choice(e, ["auto", "yes", "no"])
            },
            "RunKeeper": { s, e throws(ConfigDiagnostic) in s.runKeeper = try Value.boolean(e) },
        ]
    ])

    /// `MaxConcurrentRuns=`, `MaxConnections=`, `MaxConnectionsPerUser=`: a count from 1 to 100000.
    static func count(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> Int {
        try Value.integer(e, in: 1...100_000)
    }

    /// `IdleTimeoutSec=`, `RequestTimeoutSec=`: a finite time span above 0.
    static func timeout(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> TimeSpan {
        try Value.timeSpan(e, "a finite time span above 0") { $0 > .zero && !$0.isInfinite }
    }
}
