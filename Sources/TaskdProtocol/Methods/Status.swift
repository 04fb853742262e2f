extension SchedulerInterface {
    /// `Status(name) -> (task)`: one task, by name or kind:identifier.
    public enum Status: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Status"

        public struct Parameters: VarlinkParameters, Hashable {
            public var name: String

            public init(name: String) { self.name = name }

            public func validate() throws(ParameterError) { try ParameterError.nonEmpty(name, "name") }
        }

        public struct Reply: VarlinkReplyParameters, Hashable {
            public var task: TaskInfo

            public init(task: TaskInfo) { self.task = task }

            public func encodedParameters() -> [UInt8] {
                var parameters = JSONObjectWriter()
                parameters.json("task", task.encodedJSON)
                return parameters.finish()
            }
        }
    }
}
