extension SchedulerInterface {
    /// `Pause(target, untilUSec?, note?) -> (tasks)`: pauses every task the target names.
    public enum Pause: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Pause"
        public typealias Reply = TaskNamesReply

        public struct Parameters: VarlinkParameters, Hashable {
            public var target: String
            /// CLOCK_REALTIME µs; nil: until resumed.
            public var untilUSec: UInt64?
            public var note: String?

            public init(target: String, untilUSec: UInt64? = nil, note: String? = nil) {
                self.target = target
                self.untilUSec = untilUSec
                self.note = note
            }

            public func validate() throws(ParameterError) {
                try ParameterError.nonEmpty(target, "target")
                if let untilUSec, untilUSec > UInt64(Int64.max) {
                    throw ParameterError(name: "untilUSec", reason: "must be a whole number from 0 to \(Int64.max)")
                }
            }
        }
    }
}

extension SchedulerInterface {
    /// `Resume(target) -> (tasks)`: resumes every paused task the target names.
    public enum Resume: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Resume"
        public typealias Parameters = TargetParameters
        public typealias Reply = TaskNamesReply
    }
}

/// The reply that names tasks as `kind:identifier` (`Pause`, `Resume`).
public struct TaskNamesReply: VarlinkReplyParameters, Hashable {
    public var tasks: [String]

    public init(tasks: [String]) { self.tasks = tasks }
}
