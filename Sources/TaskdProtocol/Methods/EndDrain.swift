extension SchedulerInterface {
    /// `EndDrain() -> (waiting)`: runs start again; `waiting` runs waited for the drain to end.
    public enum EndDrain: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".EndDrain"
        public typealias Parameters = NoParameters

        public struct Reply: VarlinkReplyParameters, Hashable {
            public var waiting: Int

            public init(waiting: Int) { self.waiting = waiting }
        }
    }
}
