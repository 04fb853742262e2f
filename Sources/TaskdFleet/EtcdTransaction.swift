import TaskdProtocol

/// An etcd transaction as `etcdctl txn` reads it: comparisons, then the requests made if they
/// all hold, then those made if one does not. Keys and values are taskd's own (no spaces, no quotes).
public struct EtcdTransaction: Sendable {
    public var compares: [String] = []
    public var success: [String] = []
    public var failure: [String] = []

    public init() {}

    /// The text etcdctl reads: each section's lines, and a blank line after each section.
    var text: String {
        [compares, success, failure].map { $0.map { $0 + "\n" }.joined() + "\n" }.joined()
    }

    /// `create("key") = "N"`: the key was created at revision N (0: it does not exist).
    public mutating func created(_ key: String, at revision: UInt64) {
        compares.append(#"create("\#(key)") = "\#(revision)""#)
    }

    /// What a transaction answered.
    public struct Answer: Sendable {
        public var succeeded: Bool
        /// The store's revision after it (a put in it created its key at this revision).
        public var revision: UInt64
        public var responses: [JSONValue]

        /// The keys the `index`th request (a `get`) found.
        public func found(_ index: Int) -> [EtcdKeyValue] {
            guard index < responses.count else { return [] }
            return EtcdKeyValue.list(responses[index]["Response"]?["ResponseRange"])
        }
    }
}
