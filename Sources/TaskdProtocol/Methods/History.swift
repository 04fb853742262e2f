extension SchedulerInterface {
    /// `History(name, limit?) -> (runs)`: the task's last runs, the last to end first.
    public enum History: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".History"
        public typealias Reply = RunsReply

        public struct Parameters: VarlinkParameters, Hashable {
            public var name: String
            /// 1 to 10,000; 20 when nil.
            public var limit: Int?

            public init(name: String, limit: Int? = nil) {
                self.name = name
                self.limit = limit
            }

            public func validate() throws(ParameterError) {
                try ParameterError.nonEmpty(name, "name")
                if let limit, !(1...10_000).contains(limit) {
                    throw ParameterError(name: "limit", reason: "must be a whole number from 1 to 10000")
                }
            }
        }
    }
}
