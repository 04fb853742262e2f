extension SchedulerInterface {
    /// `Cancel(target) -> (runs)`: cancels one run (by its id) or every run of the tasks the target names.
    public enum Cancel: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Cancel"
        public typealias Parameters = TargetParameters
        public typealias Reply = RunsReply
    }
}
