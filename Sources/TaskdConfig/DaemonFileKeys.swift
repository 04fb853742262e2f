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
            "AllowUsers": access(\.access, groups: false),
            "AllowGroups": access(\.access, groups: true),
            "SubmitUsers": access(\.submitAccess, groups: false),
            "SubmitGroups": access(\.submitAccess, groups: true),
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
            "FleetEndpoints": { s, e throws(ConfigDiagnostic) in
                // Empty: no fleet (an empty assignment resets, as in systemd).
                let endpoints = e.value.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
                for endpoint in endpoints where !isEndpoint(endpoint) {
                    throw ConfigDiagnostic(
                        e.location, key: e.key, "'\(endpoint)' is not an etcd endpoint (HOST:PORT or https://HOST:PORT)"
                    )
                }
                s.fleet.endpoints = endpoints
            },
            "FleetName": { s, e throws(ConfigDiagnostic) in s.fleet.name = try fleetWord(e) },
            "FleetHost": { s, e throws(ConfigDiagnostic) in s.fleet.host = try fleetWord(e) },
            "FleetLeaseSec": { s, e throws(ConfigDiagnostic) in
                s.fleet.lease = try Value.timeSpan(e, "a time span from 2 s to 1 h") {
                    $0 >= .seconds(2) && $0 <= .seconds(3600)
                }
            },
            "FleetCACert": { s, e throws(ConfigDiagnostic) in s.fleet.caCert = try Value.absolutePath(e) },
            "FleetCert": { s, e throws(ConfigDiagnostic) in s.fleet.cert = try Value.absolutePath(e) },
            "FleetKey": { s, e throws(ConfigDiagnostic) in s.fleet.key = try Value.absolutePath(e) },
            // No longer used (taskd speaks etcd's gRPC API itself): accepted, so that a
            // configuration written for an older taskd loads.
            "FleetEtcdctl": { _, e throws(ConfigDiagnostic) in _ = try Value.absolutePath(e) },
        ]
    ])

    /// `MaxConcurrentRuns=`, `MaxConnections=`, `MaxConnectionsPerUser=`: a count from 1 to 100000.
    /// A row that appends users (or `groups`) to the access list at `list`, created by the first.
    static func access(_ list: WritableKeyPath<DaemonSettings, AccessList?> & Sendable, groups: Bool) -> Apply {
        { s, e throws(ConfigDiagnostic) in
            var access = s[keyPath: list] ?? AccessList()
            if groups {
                access.groups = try Identities.append(s[keyPath: list]?.groups, e, groups: true)
            } else {
                access.users = try Identities.append(s[keyPath: list]?.users, e, groups: false)
            }
            s[keyPath: list] = access
        }
    }

    static func count(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> Int {
        try Value.integer(e, in: 1...100_000)
    }

    /// An etcd client URL as etcdctl takes it: `HOST:PORT`, `http://HOST:PORT` or `https://HOST:PORT`.
    static func isEndpoint(_ text: String) -> Bool {
        var rest = Substring(text)
        for scheme in ["https://", "http://"] where rest.hasPrefix(scheme) { rest = rest.dropFirst(scheme.count) }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) else {
            return false
        }
        return colon > rest.startIndex && (1...65535).contains(port) && !rest.contains("/")
    }

    /// `FleetName=`, `FleetHost=`: a word of letters, digits, `.`, `_` and `-` (a part of an etcd key).
    static func fleetWord(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> String {
        let allowed = e.value.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0)
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
        guard !e.value.isEmpty, e.value.utf8.count <= 64, allowed else {
            throw ConfigDiagnostic(
                e.location, key: e.key, "'\(e.value)' is not a name of letters, digits, '.', '_' and '-' (at most 64)")
        }
        return e.value
    }

    /// `IdleTimeoutSec=`, `RequestTimeoutSec=`: a finite time span above 0.
    static func timeout(_ e: UnitFileEntry) throws(ConfigDiagnostic) -> TimeSpan {
        try Value.timeSpan(e, "a finite time span above 0") { $0 > .zero && !$0.isInfinite }
    }
}
