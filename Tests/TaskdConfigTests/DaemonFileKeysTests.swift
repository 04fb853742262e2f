import Testing

@testable import TaskScheduling
@testable import TaskdConfig

/// Every `[Daemon]` key of `taskd.conf`: a good value and the setting it gives, a bad value and its
/// exact diagnostic; and the table mechanism it shares with task files.
@Suite("Config: every [Daemon] key is one row of the table, with its value and its file:line error")
struct DaemonFileKeysTests {
    /// One key: a value it takes and what that sets; a value it refuses and the message.
    struct Row: Sendable {
        var key: String
        var good: String
        var sets: @Sendable (inout DaemonSettings) -> Void
        var bad: String
        var error: String
    }

    static let path = "/etc/taskd/taskd.conf"

    /// A key added to the table without a row here fails `covered`.
    static let rows: [Row] = [
        Row(
            key: "StateDirectory", good: "/var/lib/x", sets: { $0.stateDirectory = "/var/lib/x" }, bad: "var/lib/x",
            error: "'var/lib/x' is not an absolute path"),
        Row(
            key: "Socket", good: "/run/t.sock", sets: { $0.socketPath = "/run/t.sock" }, bad: "t.sock",
            error: "'t.sock' is not an absolute path"),
        Row(
            key: "MetricsFile", good: "/var/lib/node/taskd.prom", sets: { $0.metricsFile = "/var/lib/node/taskd.prom" },
            bad: "taskd.prom", error: "'taskd.prom' is not an absolute path"),
        Row(
            key: "AllowUsers", good: "root 1234", sets: { $0.access = AccessList(users: [0, 1234]) },
            bad: "root no-such-user-here", error: "no such user 'no-such-user-here'"),
        Row(
            key: "AllowGroups", good: "root 77", sets: { $0.access = AccessList(groups: [0, 77]) },
            bad: "no-such-group-here", error: "no such group 'no-such-group-here'"),
        Row(
            key: "SubmitUsers", good: "root 1234", sets: { $0.submitAccess = AccessList(users: [0, 1234]) },
            bad: "no-such-user-here", error: "no such user 'no-such-user-here'"),
        Row(
            key: "SubmitGroups", good: "77", sets: { $0.submitAccess = AccessList(groups: [77]) },
            bad: "no-such-group-here", error: "no such group 'no-such-group-here'"),
        Row(
            key: "MaxConcurrentRuns", good: "3", sets: { $0.maxConcurrentRuns = 3 }, bad: "0",
            error: "'0' is not a whole number from 1 to 100000"),
        Row(
            key: "MaxConnections", good: "300", sets: { $0.maxConnections = 300 }, bad: "100001",
            error: "'100001' is not a whole number from 1 to 100000"),
        Row(
            key: "MaxConnectionsPerUser", good: "20", sets: { $0.maxConnectionsPerUser = 20 }, bad: "many",
            error: "'many' is not a whole number from 1 to 100000"),
        Row(
            key: "IdleTimeoutSec", good: "2min", sets: { $0.idleTimeout = .seconds(120) }, bad: "infinity",
            error: "'infinity' is not a finite time span above 0"),
        Row(
            key: "RequestTimeoutSec", good: "500ms", sets: { $0.requestTimeout = .milliseconds(500) }, bad: "0",
            error: "'0' is not a finite time span above 0"),
        Row(
            key: "SyncIntervalSec", good: "infinity", sets: { $0.syncInterval = .infinity }, bad: "often",
            error: "'often' is not a time span"),
        Row(
            key: "WatchSleep", good: "no", sets: { $0.watchSleep = false }, bad: "maybe",
            error: "'maybe' is not a boolean (yes or no)"),
        Row(
            key: "RunCgroups", good: "yes", sets: { $0.runCgroups = "yes" }, bad: "sometimes",
            error: "'sometimes' is not auto, yes or no"),
        Row(
            key: "RunKeeper", good: "yes", sets: { $0.runKeeper = true }, bad: "perhaps",
            error: "'perhaps' is not a boolean (yes or no)"),
        Row(
            key: "FleetEndpoints", good: "https://10.0.0.1:2379, 10.0.0.2:2379",
            sets: { $0.fleet.endpoints = ["https://10.0.0.1:2379", "10.0.0.2:2379"] }, bad: "https://etcd1",
            error: "'https://etcd1' is not an etcd endpoint (HOST:PORT or https://HOST:PORT)"),
        Row(
            key: "FleetName", good: "prod.web", sets: { $0.fleet.name = "prod.web" }, bad: "prod/web",
            error: "'prod/web' is not a name of letters, digits, '.', '_' and '-' (at most 64)"),
        Row(
            key: "FleetHost", good: "web-1", sets: { $0.fleet.host = "web-1" }, bad: "web 1",
            error: "'web 1' is not a name of letters, digits, '.', '_' and '-' (at most 64)"),
        Row(
            key: "FleetLeaseSec", good: "15s", sets: { $0.fleet.lease = .seconds(15) }, bad: "1s",
            error: "'1s' is not a time span from 2 s to 1 h"),
        Row(
            key: "FleetCACert", good: "/etc/taskd/etcd-ca.pem", sets: { $0.fleet.caCert = "/etc/taskd/etcd-ca.pem" },
            bad: "ca.pem", error: "'ca.pem' is not an absolute path"),
        Row(
            key: "FleetCert", good: "/etc/taskd/etcd.pem", sets: { $0.fleet.cert = "/etc/taskd/etcd.pem" },
            bad: "etcd.pem", error: "'etcd.pem' is not an absolute path"),
        Row(
            key: "FleetKey", good: "/etc/taskd/etcd.key", sets: { $0.fleet.key = "/etc/taskd/etcd.key" },
            bad: "etcd.key", error: "'etcd.key' is not an absolute path"),
        Row(
            key: "FleetEtcdctl", good: "/opt/etcd/etcdctl", sets: { _ in },
            bad: "etcdctl", error: "'etcdctl' is not an absolute path"),
    ]

    @Test("every row of the table has a row here, and [Daemon] is its one section")
    func covered() {
        #expect(DaemonFileKeys.table.sections == ["Daemon"])
        #expect(DaemonFileKeys.table.keys.flatMap(\.keys) == Self.rows.map(\.key).sorted())
    }

    @Test("each key's good value sets its setting and nothing else", arguments: rows.map(\.key))
    func good(_ key: String) throws {
        let row = try #require(Self.rows.first { $0.key == key })
        var expected = DaemonSettings()
        row.sets(&expected)
        // FleetEtcdctl= is read and ignored: taskd no longer runs etcdctl.
        #expect(expected != DaemonSettings() || key == "FleetEtcdctl", "the sample must differ from the default")
        let (settings, diagnostics) = ConfigLoader.parseDaemonText(
            "# taskd.conf\n[Daemon]\n\(key)=\(row.good)\n", path: Self.path)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(settings == expected)
    }

    @Test(
        "each key's bad value is one error at its file:line, and leaves the setting as it was",
        arguments: rows.map(\.key))
    func bad(_ key: String) throws {
        let row = try #require(Self.rows.first { $0.key == key })
        var expected = DaemonSettings()
        row.sets(&expected)
        let (settings, diagnostics) = ConfigLoader.parseDaemonText(
            "[Daemon]\n\(key)=\(row.good)\n\n\(key)=\(row.bad)\n", path: Self.path)
        #expect(diagnostics.map(\.description) == ["\(Self.path):4: error: \(key)=: \(row.error)"])
        #expect(settings == expected, "the good value before it stands")
    }

    @Test("an unknown section or key reads the same in taskd.conf and in a task file; X- is skipped in both")
    func unknownSectionsAndKeys() {
        let tail = "[Service]\nType=oneshot\n[X-Mine]\nA=b\n"
        let (_, daemon) = ConfigLoader.parseDaemonText("[Daemon]\nFoo=1\nX-Note=1\n" + tail, path: "/d.conf")
        #expect(
            daemon.map(\.description) == [
                "/d.conf:2: error: Foo=: unknown key in section [Daemon]",
                "/d.conf:5: error: Type=: unknown section [Service]; expected [Daemon]",
            ])
        let (_, task) = ConfigLoader.parseTaskText(
            "[Exec]\nExecStart=/bin/true\nFoo=1\nX-Note=1\n" + tail, path: "/t.task")
        #expect(
            task.map(\.description) == [
                "/t.task:3: error: Foo=: unknown key in section [Exec]",
                "/t.task:6: error: Type=: unknown section [Service]; expected [Task], [Timer] or [Exec]",
            ])
    }

    @Test("AllowUsers= and AllowGroups= append line by line; an empty value resets the list but keeps access on")
    func accessLists() {
        let (settings, diagnostics) = ConfigLoader.parseDaemonText(
            "[Daemon]\nAllowUsers=0\nAllowUsers=1234\nAllowGroups=77\nAllowGroups=\n", path: Self.path)
        #expect(diagnostics.isEmpty)
        #expect(settings.access == AccessList(users: [0, 1234], groups: []))
        #expect(ConfigLoader.parseDaemonText("[Daemon]\nAllowUsers=\n", path: Self.path).0.access == AccessList())
        #expect(ConfigLoader.parseDaemonText("[Daemon]\n", path: Self.path).0.access == nil)
    }
}
