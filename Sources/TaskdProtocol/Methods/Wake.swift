extension SchedulerInterface {
    /// `Wake(target, id?, payload?, followRetries?) -> (runs)`: starts, joins or queues a run of
    /// every task the target names.
    public enum Wake: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Wake"
        public typealias Reply = RunsReply

        public struct Parameters: VarlinkParameters, Hashable {
            public var target: String
            public var id: String?
            public var payload: [String: JSONValue]?
            /// With `more`: whether a failed run is followed into its retry (default true).
            public var followRetries: Bool?

            public init(
                target: String, id: String? = nil, payload: [String: JSONValue]? = nil, followRetries: Bool? = nil
            ) {
                self.target = target
                self.id = id
                self.payload = payload
                self.followRetries = followRetries
            }

            /// Read by hand, not through the generic decoder: every wake pays for it (about 10% of the
            /// wake-to-handler time of the benchmark, measured); a test holds it to `init(decoding:)`.
            public init(parameters p: [String: JSONValue]) throws(ParameterError) {
                let names = ["followRetries", "id", "payload", "target"]
                if p.keys.contains(where: { !names.contains($0) }) {
                    throw ParameterError(name: p.keys.sorted().first { !names.contains($0) }!, reason: "unknown member")
                }
                guard case .string(let target)? = p["target"] else {
                    throw ParameterError(name: "target", reason: "must be a string")
                }
                self.target = target
                switch p["id"] {
                case nil, .null?: id = nil
                case .string(let s)?: id = s
                default: throw ParameterError(name: "id", reason: "must be a string")
                }
                switch p["payload"] {
                case nil, .null?: payload = nil
                case .object(let o)?: payload = o
                default: throw ParameterError(name: "payload", reason: "must be an object")
                }
                switch p["followRetries"] {
                case nil, .null?: followRetries = nil
                case .bool(let b)?: followRetries = b
                default: throw ParameterError(name: "followRetries", reason: "must be true or false")
                }
                try validate()
            }

            public func validate() throws(ParameterError) { try ParameterError.nonEmpty(target, "target") }
        }
    }
}
