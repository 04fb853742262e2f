extension SchedulerInterface {
    /// `Drain(timeoutUSec?) -> (drained, runs)`: no new run starts; answers once no run is active
    /// (`drained`), or after `timeoutUSec` with the runs still active.
    public enum Drain: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Drain"

        public struct Parameters: VarlinkParameters, Hashable {
            /// How long to wait for the active runs (µs); nil: as long as they take.
            public var timeoutUSec: UInt64?

            public init(timeoutUSec: UInt64? = nil) { self.timeoutUSec = timeoutUSec }

            public func validate() throws(ParameterError) {
                if let timeoutUSec, timeoutUSec > UInt64(Int64.max) {
                    throw ParameterError(name: "timeoutUSec", reason: "must be a whole number from 0 to \(Int64.max)")
                }
            }
        }

        public struct Reply: VarlinkReplyParameters, Hashable {
            /// No run is active.
            public var drained: Bool
            /// The runs still active (none when drained).
            public var runs: [RunInfo]

            public init(drained: Bool, runs: [RunInfo]) {
                self.drained = drained
                self.runs = runs
            }
        }
    }
}
