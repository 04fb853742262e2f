import TaskdProtocol

/// One request to etcd's v3 gRPC API: its method's path, its message built as a JSON value (named
/// as etcd's protobuf names the fields, as its JSON gateway reads it: bytes base64, 64-bit numbers
/// as decimal strings), never as text, and the message its answer is. `Protobuf` encodes it.
public struct EtcdRequest: Hashable, Sendable {
    public var path: String
    public var body: JSONValue
    /// The request's and the answer's message names (`Protobuf.schema`).
    public var message: String
    public var answer: String

    public init(path: String, body: JSONValue, message: String, answer: String) {
        self.path = path
        self.body = body
        self.message = message
        self.answer = answer
    }

    /// The keys from `key` up to `end` (nil: `key` alone); `oldestFirst` sorts by create revision.
    public static func range(_ key: String, end: String? = nil, oldestFirst: Bool = false) -> EtcdRequest {
        var body = keyBody(key, end: end)
        if oldestFirst, case .object(var fields) = body {
            fields["sort_order"] = "ASCEND"
            fields["sort_target"] = "CREATE"
            body = .object(fields)
        }
        return EtcdRequest(path: "/etcdserverpb.KV/Range", body: body, message: "RangeRequest", answer: "RangeResponse")
    }

    /// Every key that starts with `prefix`, oldest first.
    public static func list(prefix: String) -> EtcdRequest { range(prefix, end: prefixEnd(prefix), oldestFirst: true) }

    /// Puts `value` at `key`, on `lease` if given.
    public static func put(_ key: String, _ value: String, lease: Int64? = nil) -> EtcdRequest {
        EtcdRequest(
            path: "/etcdserverpb.KV/Put", body: putBody(key, value, lease: lease), message: "PutRequest",
            answer: "PutResponse")
    }

    /// Deletes `key`, or the keys from it up to `end`.
    public static func delete(_ key: String, end: String? = nil) -> EtcdRequest {
        EtcdRequest(
            path: "/etcdserverpb.KV/DeleteRange", body: keyBody(key, end: end), message: "DeleteRangeRequest",
            answer: "DeleteRangeResponse")
    }

    /// One transaction.
    public static func txn(_ transaction: EtcdTransaction) -> EtcdRequest {
        EtcdRequest(path: "/etcdserverpb.KV/Txn", body: transaction.json, message: "TxnRequest", answer: "TxnResponse")
    }

    /// A new lease of `seconds`.
    public static func grant(seconds: Int) -> EtcdRequest {
        EtcdRequest(
            path: "/etcdserverpb.Lease/LeaseGrant", body: .object(["TTL": .string(String(seconds))]),
            message: "LeaseGrantRequest", answer: "LeaseGrantResponse")
    }

    /// Renews `lease` once (a stream of one request, and its one answer).
    public static func keepAlive(_ lease: Int64) -> EtcdRequest {
        EtcdRequest(
            path: "/etcdserverpb.Lease/LeaseKeepAlive", body: .object(["ID": .string(String(lease))]),
            message: "LeaseKeepAliveRequest", answer: "LeaseKeepAliveResponse")
    }

    /// Revokes `lease`: its keys go.
    public static func revoke(_ lease: Int64) -> EtcdRequest {
        EtcdRequest(
            path: "/etcdserverpb.Lease/LeaseRevoke", body: .object(["ID": .string(String(lease))]),
            message: "LeaseRevokeRequest", answer: "LeaseRevokeResponse")
    }

    /// A watch of the deletions under `prefix` (puts filtered out), from `revision` (0: from now):
    /// a stream of one request (etcd keeps the watch when the request side ends) and many answers.
    public static func watchDeletions(prefix: String, from revision: Int64) -> EtcdRequest {
        var create: [String: JSONValue] = [
            "key": .string(Base64.encode(prefix)), "range_end": .string(Base64.encode(prefixEnd(prefix))),
            "filters": .array(["NOPUT"]),
        ]
        if revision > 0 { create["start_revision"] = .string(String(revision)) }
        return EtcdRequest(
            path: "/etcdserverpb.Watch/Watch", body: .object(["create_request": .object(create)]),
            message: "WatchRequest", answer: "WatchResponse")
    }

    /// The first key after every key that starts with `prefix`: its last byte plus one (etcd's
    /// `WithPrefix`); "\0" (every key) for an empty prefix.
    public static func prefixEnd(_ prefix: String) -> String {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return String(decoding: bytes, as: UTF8.self)
            }
            bytes.removeLast()
        }
        return "\0"
    }

    static func keyBody(_ key: String, end: String?) -> JSONValue {
        var fields: [String: JSONValue] = ["key": .string(Base64.encode(key))]
        if let end { fields["range_end"] = .string(Base64.encode(end)) }
        return .object(fields)
    }

    static func putBody(_ key: String, _ value: String, lease: Int64?) -> JSONValue {
        var fields: [String: JSONValue] = ["key": .string(Base64.encode(key)), "value": .string(Base64.encode(value))]
        if let lease { fields["lease"] = .string(String(lease)) }
        return .object(fields)
    }

    /// A 64-bit number of a request's or an answer's JSON: a decimal string, or a number.
    static func int(_ value: JSONValue?) -> Int64? {
        if let text = value?.stringValue { return Int64(text) }
        return value?.intValue
    }
}
