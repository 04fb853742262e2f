import TaskdProtocol

/// etcd's protobuf messages (`etcdserverpb`, `mvccpb`), those taskd sends and reads, as a schema:
/// requests are built as JSON values named as etcd's gateway names them, and encoded by this
/// schema; answers are decoded into the same shape (64-bit numbers as decimal strings, bytes as
/// base64, enums by name, defaults left out).
enum Protobuf {
    /// A field's type.
    indirect enum Kind: Sendable {
        case int64, bool, bytes, string
        case enumeration([String])
        case message(String)
    }

    struct Field: Sendable {
        var number: Int
        var kind: Kind
        var repeated = false
    }

    typealias Message = [String: Field]

    static let kvEnums = (
        sortOrder: ["NONE", "ASCEND", "DESCEND"], sortTarget: ["KEY", "VERSION", "CREATE", "MOD", "VALUE"]
    )

    /// Every message by name (the fields taskd uses; others are skipped when read).
    static let schema: [String: Message] = [
        "ResponseHeader": [
            "cluster_id": .init(number: 1, kind: .int64), "member_id": .init(number: 2, kind: .int64),
            "revision": .init(number: 3, kind: .int64), "raft_term": .init(number: 4, kind: .int64),
        ],
        "KeyValue": [
            "key": .init(number: 1, kind: .bytes), "create_revision": .init(number: 2, kind: .int64),
            "mod_revision": .init(number: 3, kind: .int64), "version": .init(number: 4, kind: .int64),
            "value": .init(number: 5, kind: .bytes), "lease": .init(number: 6, kind: .int64),
        ],
        "RangeRequest": [
            "key": .init(number: 1, kind: .bytes), "range_end": .init(number: 2, kind: .bytes),
            "sort_order": .init(number: 5, kind: .enumeration(kvEnums.sortOrder)),
            "sort_target": .init(number: 6, kind: .enumeration(kvEnums.sortTarget)),
        ],
        "RangeResponse": [
            "header": .init(number: 1, kind: .message("ResponseHeader")),
            "kvs": .init(number: 2, kind: .message("KeyValue"), repeated: true),
            "count": .init(number: 4, kind: .int64),
        ],
        "PutRequest": [
            "key": .init(number: 1, kind: .bytes), "value": .init(number: 2, kind: .bytes),
            "lease": .init(number: 3, kind: .int64),
        ],
        "PutResponse": ["header": .init(number: 1, kind: .message("ResponseHeader"))],
        "DeleteRangeRequest": ["key": .init(number: 1, kind: .bytes), "range_end": .init(number: 2, kind: .bytes)],
        "DeleteRangeResponse": [
            "header": .init(number: 1, kind: .message("ResponseHeader")),
            "deleted": .init(number: 2, kind: .int64),
        ],
        "RequestOp": [
            "request_range": .init(number: 1, kind: .message("RangeRequest")),
            "request_put": .init(number: 2, kind: .message("PutRequest")),
            "request_delete_range": .init(number: 3, kind: .message("DeleteRangeRequest")),
        ],
        "ResponseOp": [
            "response_range": .init(number: 1, kind: .message("RangeResponse")),
            "response_put": .init(number: 2, kind: .message("PutResponse")),
            "response_delete_range": .init(number: 3, kind: .message("DeleteRangeResponse")),
        ],
        "Compare": [
            "result": .init(number: 1, kind: .enumeration(["EQUAL", "GREATER", "LESS", "NOT_EQUAL"])),
            "target": .init(number: 2, kind: .enumeration(["VERSION", "CREATE", "MOD", "VALUE", "LEASE"])),
            "key": .init(number: 3, kind: .bytes), "create_revision": .init(number: 5, kind: .int64),
        ],
        "TxnRequest": [
            "compare": .init(number: 1, kind: .message("Compare"), repeated: true),
            "success": .init(number: 2, kind: .message("RequestOp"), repeated: true),
            "failure": .init(number: 3, kind: .message("RequestOp"), repeated: true),
        ],
        "TxnResponse": [
            "header": .init(number: 1, kind: .message("ResponseHeader")),
            "succeeded": .init(number: 2, kind: .bool),
            "responses": .init(number: 3, kind: .message("ResponseOp"), repeated: true),
        ],
        "LeaseGrantRequest": ["TTL": .init(number: 1, kind: .int64), "ID": .init(number: 2, kind: .int64)],
        "LeaseGrantResponse": [
            "header": .init(number: 1, kind: .message("ResponseHeader")),
            "ID": .init(number: 2, kind: .int64), "TTL": .init(number: 3, kind: .int64),
            "error": .init(number: 4, kind: .string),
        ],
        "LeaseRevokeRequest": ["ID": .init(number: 1, kind: .int64)],
        "LeaseRevokeResponse": ["header": .init(number: 1, kind: .message("ResponseHeader"))],
        "LeaseKeepAliveRequest": ["ID": .init(number: 1, kind: .int64)],
        "LeaseKeepAliveResponse": [
            "header": .init(number: 1, kind: .message("ResponseHeader")),
            "ID": .init(number: 2, kind: .int64), "TTL": .init(number: 3, kind: .int64),
        ],
        "WatchRequest": ["create_request": .init(number: 1, kind: .message("WatchCreateRequest"))],
        "WatchCreateRequest": [
            "key": .init(number: 1, kind: .bytes), "range_end": .init(number: 2, kind: .bytes),
            "start_revision": .init(number: 3, kind: .int64),
            "filters": .init(number: 5, kind: .enumeration(["NOPUT", "NODELETE"]), repeated: true),
        ],
        "WatchResponse": [
            "header": .init(number: 1, kind: .message("ResponseHeader")),
            "watch_id": .init(number: 2, kind: .int64), "created": .init(number: 3, kind: .bool),
            "canceled": .init(number: 4, kind: .bool), "compact_revision": .init(number: 5, kind: .int64),
            "cancel_reason": .init(number: 6, kind: .string),
            "events": .init(number: 11, kind: .message("Event"), repeated: true),
        ],
        "Event": [
            "type": .init(number: 1, kind: .enumeration(["PUT", "DELETE"])),
            "kv": .init(number: 2, kind: .message("KeyValue")), "prev_kv": .init(number: 3, kind: .message("KeyValue")),
        ],
    ]
}
