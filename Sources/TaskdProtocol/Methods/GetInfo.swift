extension VarlinkServiceInterface {
    /// `GetInfo() -> (vendor, product, version, url, interfaces)`: what the service is.
    public enum GetInfo: VarlinkMethod {
        public static let name = VarlinkServiceInterface.name + ".GetInfo"
        public typealias Parameters = NoParameters

        public struct Reply: VarlinkReplyParameters, Hashable {
            public var vendor: String
            public var product: String
            public var version: String
            public var url: String
            public var interfaces: [String]

            public init(vendor: String, product: String, version: String, url: String, interfaces: [String]) {
                self.vendor = vendor
                self.product = product
                self.version = version
                self.url = url
                self.interfaces = interfaces
            }
        }
    }
}
