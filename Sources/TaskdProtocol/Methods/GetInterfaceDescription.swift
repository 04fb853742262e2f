extension VarlinkServiceInterface {
    /// `GetInterfaceDescription(interface) -> (description)`: an interface's IDL text.
    public enum GetInterfaceDescription: VarlinkMethod {
        public static let name = VarlinkServiceInterface.name + ".GetInterfaceDescription"

        public struct Parameters: VarlinkParameters, Hashable {
            public var interface: String

            public init(interface: String) { self.interface = interface }

            public func validate() throws(ParameterError) { try ParameterError.nonEmpty(interface, "interface") }
        }

        public struct Reply: VarlinkReplyParameters, Hashable {
            public var description: String

            public init(description: String) { self.description = description }
        }
    }
}
