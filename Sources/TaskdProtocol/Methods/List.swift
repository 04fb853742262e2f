extension SchedulerInterface {
    /// `List() -> (tasks)`: every task, sorted by name.
    public enum List: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".List"
        public typealias Parameters = NoParameters

        /// Written straight to bytes: with 10,000 tasks it is megabytes, built without a tree of values.
        public struct Reply: VarlinkReplyParameters, Hashable {
            public var tasks: [TaskInfo]

            public init(tasks: [TaskInfo]) { self.tasks = tasks }

            public func encodedParameters() -> [UInt8] {
                var parameters = JSONObjectWriter()
                parameters.json("tasks", JSONObjectWriter.array(tasks.map(\.encodedJSON)))
                return parameters.finish()
            }
        }
    }
}
