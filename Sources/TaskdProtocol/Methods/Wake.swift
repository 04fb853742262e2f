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

            public func validate() throws(ParameterError) { try ParameterError.nonEmpty(target, "target") }
        }
    }
}
