extension SchedulerInterface {
    /// `Reload() -> (added, removed, changed, unchanged)`: loads the configuration again.
    public enum Reload: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Reload"
        public typealias Parameters = NoParameters

        public struct Reply: VarlinkReplyParameters, Hashable {
            public var added: [String]
            public var removed: [String]
            public var changed: [String]
            public var unchanged: Int

            public init(added: [String], removed: [String], changed: [String], unchanged: Int) {
                self.added = added
                self.removed = removed
                self.changed = changed
                self.unchanged = unchanged
            }
        }
    }
}
