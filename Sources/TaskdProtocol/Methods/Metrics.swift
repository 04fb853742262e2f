extension SchedulerInterface {
    /// `Metrics() -> (text)`: every metric in the OpenMetrics text format.
    public enum Metrics: VarlinkMethod {
        public static let name = SchedulerInterface.name + ".Metrics"
        public typealias Parameters = NoParameters

        /// Written straight to bytes: with 10,000 tasks the text is over a megabyte.
        public struct Reply: VarlinkReplyParameters, Hashable {
            public var text: String

            public init(text: String) { self.text = text }

            public func encodedParameters() -> [UInt8] {
                var parameters = JSONObjectWriter()
                parameters.string("text", text)
                return parameters.finish()
            }
        }
    }
}
