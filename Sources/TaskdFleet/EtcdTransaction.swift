import TaskdProtocol

/// An etcd transaction as data: comparisons, then the operations made if they all hold, then those
/// made if one does not (`POST /v3/kv/txn`).
public struct EtcdTransaction: Hashable, Sendable {
    public var compares: [JSONValue] = []
    public var success: [EtcdOperation] = []
    public var failure: [EtcdOperation] = []

    public init() {}

    /// Compares the key's create revision with `revision` (0: the key does not exist).
    public mutating func created(_ key: String, at revision: UInt64) {
        compares.append(
            .object([
                "key": .string(Base64.encode(key)), "target": "CREATE", "result": "EQUAL",
                "create_revision": .string(String(revision)),
            ]))
    }

    /// The request body (a `TxnRequest`).
    var json: JSONValue {
        .object([
            "compare": .array(compares), "success": .array(success.map(\.json)),
            "failure": .array(failure.map(\.json)),
        ])
    }

    /// What a transaction answered.
    public struct Answer: Sendable {
        public var succeeded: Bool
        /// The store's revision after it (a put in it created its key at this revision).
        public var revision: UInt64
        public var responses: [JSONValue]

        /// Reads the answer to a transaction (a `TxnResponse`).
        init(_ answer: JSONValue) {
            succeeded = answer["succeeded"]?.boolValue ?? false
            revision = UInt64(clamping: EtcdRequest.int(answer["header"]?["revision"]) ?? 0)
            responses = answer["responses"]?.arrayValue ?? []
        }

        /// The keys the `index`th operation (a `get`) found.
        public func found(_ index: Int) -> [EtcdKeyValue] {
            guard index < responses.count else { return [] }
            return EtcdKeyValue.list(responses[index]["response_range"])
        }
    }
}

/// One operation of a transaction: a put, a get or a delete.
public enum EtcdOperation: Hashable, Sendable {
    /// Puts `value` at `key`, on `lease` if one is given.
    case put(String, String, lease: Int64? = nil)
    /// Reads `key`.
    case get(String)
    /// Deletes `key`, or the keys from it up to `end` (excluded).
    case delete(String, end: String? = nil)

    /// As a `RequestOp` of a transaction: `{"request_put": {...}}` and the like.
    var json: JSONValue {
        switch self {
        case .put(let key, let value, let lease):
            .object(["request_put": EtcdRequest.putBody(key, value, lease: lease)])
        case .get(let key): .object(["request_range": EtcdRequest.keyBody(key, end: nil)])
        case .delete(let key, let end): .object(["request_delete_range": EtcdRequest.keyBody(key, end: end)])
        }
    }
}
