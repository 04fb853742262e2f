import TaskdProtocol

/// One key of etcd as its JSON answers give it (`kvs`), decoded.
public struct EtcdKeyValue: Hashable, Sendable {
    public var key: String
    public var value: String
    /// The revision that created the key: taskd's fence token for a claim.
    public var createRevision: UInt64
    /// The lease the key is attached to (0: none).
    public var lease: Int64

    /// The keys of one range response (`{"kvs": [...]}`); keys that cannot be decoded are left out.
    static func list(_ response: JSONValue?) -> [EtcdKeyValue] {
        (response?["kvs"]?.arrayValue ?? []).compactMap { kv in
            guard let key = kv["key"]?.stringValue.flatMap(Base64.decodeText) else { return nil }
            return EtcdKeyValue(
                key: key, value: kv["value"]?.stringValue.flatMap(Base64.decodeText) ?? "",
                createRevision: UInt64(clamping: EtcdRequest.int(kv["create_revision"]) ?? 0),
                lease: EtcdRequest.int(kv["lease"]) ?? 0)
        }
    }
}
