extension SchedulerInterface {
    /// `Follow(runIds, followRetries?) -> (runs)`: the runs as they are now; with `more`, each later
    /// state too, as `Wake` with `more` tells them. How a client resumes following after an upgrade.
    public enum Follow: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Follow"
        public typealias Reply = RunsReply

        public struct Parameters: VarlinkParameters, Hashable {
            public var runIds: [String]
            /// With `more`: whether a failed run is followed into its retry (default true).
            public var followRetries: Bool?

            public init(runIds: [String], followRetries: Bool? = nil) {
                self.runIds = runIds
                self.followRetries = followRetries
            }

            public func validate() throws(ParameterError) {
                guard !runIds.isEmpty, runIds.count <= 1000 else {
                    throw ParameterError(name: "runIds", reason: "must name 1 to 1000 runs")
                }
                for id in runIds { try ParameterError.nonEmpty(id, "runIds") }
            }
        }
    }
}
