import TaskScheduling

/// How taskd reaches the fleet's etcd cluster (`[Daemon] Fleet…=` keys); `endpoints` empty: no fleet.
public struct FleetSettings: Hashable, Sendable {
    /// `FleetEndpoints=`: etcd's client URLs (`https://10.0.0.1:2379 …`), as etcdctl takes them.
    public var endpoints: [String] = []
    /// `FleetName=`: the fleet's name, the first element of every key taskd writes (`/taskd/NAME/…`).
    public var name = "default"
    /// `FleetHost=`: this host's name in the fleet (nil: the host name).
    public var host: String?
    /// `FleetLeaseSec=`: the lease of this host's claims; a host that cannot renew it for this long
    /// loses them (its runs are cancelled before, reason `fence-lost`).
    public var lease = TimeSpan.seconds(10)
    /// `FleetCACert=`, `FleetCert=`, `FleetKey=`: TLS, PEM files (the CA that signed etcd's
    /// certificate, this host's client certificate and its key), as etcdctl's `--cacert`, `--cert`, `--key`.
    public var caCert: String?
    public var cert: String?
    public var key: String?

    public init() {}
}
