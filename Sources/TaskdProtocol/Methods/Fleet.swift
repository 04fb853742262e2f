extension SchedulerInterface {
    /// `Fleet() -> (name, host, hosts, claims)`: the fleet as etcd has it now (`taskctl fleet`):
    /// its hosts, and the claims they hold; no `name` when taskd has no fleet.
    public enum Fleet: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Fleet"
        public typealias Parameters = NoParameters

        public struct Reply: VarlinkReplyParameters, Hashable {
            /// `FleetName=`, and this host's name in it; nil without `FleetEndpoints=`.
            public var name: String?
            public var host: String?
            /// The hosts that hold a lease now (`hosts/HOST`).
            public var hosts: [String]
            /// The claims held now, oldest first.
            public var claims: [FleetClaimInfo]

            public init(name: String?, host: String?, hosts: [String], claims: [FleetClaimInfo]) {
                self.name = name
                self.host = host
                self.hosts = hosts
                self.claims = claims
            }
        }
    }
}
