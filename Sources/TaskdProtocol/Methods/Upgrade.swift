extension SchedulerInterface {
    /// `Upgrade() -> (previousVersion, version, runs)`: taskd re-executes the binary at its path,
    /// the command runs in progress going on; answered just before the `execve`, or `UpgradeFailed`.
    public enum Upgrade: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Upgrade"
        public typealias Parameters = NoParameters

        public struct Reply: VarlinkReplyParameters, Hashable {
            /// The `--version` lines of the running binary and of the one it becomes.
            public var previousVersion: String
            public var version: String
            /// The command runs handed to the new image.
            public var runs: Int

            public init(previousVersion: String, version: String, runs: Int) {
                self.previousVersion = previousVersion
                self.version = version
                self.runs = runs
            }
        }
    }
}
