extension SchedulerInterface {
    /// `Cancel(target) -> (runs)`: cancels one run (by its id) or every run of the tasks the target names.
    public enum Cancel: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Cancel"
        public typealias Parameters = TargetParameters
        public typealias Reply = RunsReply
    }
}

/// The parameters of a method that takes only a target (`Cancel`, `Resume`).
public struct TargetParameters: VarlinkParameters, Hashable {
    public var target: String

    public init(target: String) { self.target = target }

    public func validate() throws(ParameterError) { try ParameterError.nonEmpty(target, "target") }
}
