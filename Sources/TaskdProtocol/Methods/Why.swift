extension SchedulerInterface {
    /// `Why(name) -> (task, reasons)`: what decides, now, whether a task runs.
    public enum Why: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Why"

        public struct Parameters: VarlinkParameters, Hashable {
            public var name: String

            public init(name: String) { self.name = name }

            public func validate() throws(ParameterError) { try ParameterError.nonEmpty(name, "name") }
        }

        public struct Reply: VarlinkReplyParameters, Hashable {
            /// The task as kind:identifier.
            public var task: String
            /// The most decisive first.
            public var reasons: [WhyReasonInfo]

            public init(task: String, reasons: [WhyReasonInfo]) {
                self.task = task
                self.reasons = reasons
            }
        }
    }
}
