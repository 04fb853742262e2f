extension SchedulerInterface {
    /// `Resume(target) -> (tasks)`: resumes every paused task the target names.
    public enum Resume: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Resume"
        public typealias Parameters = TargetParameters
        public typealias Reply = TaskNamesReply
    }
}
