import TaskdProtocol
import Testing

@testable import TaskdFleet

/// etcd's messages on the wire: the bytes protoc's encoding gives, read back into the same JSON.
struct ProtobufTests {
    @Test("requests encode as protobuf: fields by number, 64-bit numbers as varints, enums by index")
    func encoding() throws {
        #expect(Protobuf.encode(EtcdRequest.range("/a/").body, as: "RangeRequest") == [0x0A, 0x03, 0x2F, 0x61, 0x2F])
        #expect(Protobuf.encode(EtcdRequest.grant(seconds: 10).body, as: "LeaseGrantRequest") == [0x08, 0x0A])
        // A negative id is ten bytes of varint, as Go's int64 encodes it.
        let negative = try #require(Protobuf.encode(EtcdRequest.revoke(-1).body, as: "LeaseRevokeRequest"))
        #expect(negative == [0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x01])
        // The watch: its create request (field 1), whose NOPUT filter is enum 0 of field 5.
        let watch = try #require(
            Protobuf.encode(EtcdRequest.watchDeletions(prefix: "/p/", from: 0).body, as: "WatchRequest"))
        #expect(watch == [0x0A, 0x0C, 0x0A, 0x03, 0x2F, 0x70, 0x2F, 0x12, 0x03, 0x2F, 0x70, 0x30, 0x28, 0x00])
        // A field the message does not have, or a value of the wrong type, is not sent.
        #expect(Protobuf.encode(.object(["nope": "1"]), as: "PutRequest") == nil)
        #expect(Protobuf.encode(.object(["lease": "x"]), as: "PutRequest") == nil)
    }

    @Test("a claim's transaction encodes, and an answer decodes into the shape the client reads")
    func roundTrip() throws {
        var txn = EtcdTransaction()
        txn.created("/k", at: 0)
        txn.success = [.put("/k", "h", lease: 7)]
        txn.failure = [.get("/k"), .delete("/a", end: "/b")]
        #expect(Protobuf.encode(txn.json, as: "TxnRequest") != nil)
        let answer: JSONValue = .object([
            "header": .object(["revision": "12"]),
            "responses": .array([
                .object([
                    "response_range": .object([
                        "kvs": .array([
                            .object([
                                "key": .string(Base64.encode("/k")), "value": .string(Base64.encode("h")),
                                "create_revision": "3", "lease": "-2",
                            ])
                        ]), "count": "1",
                    ])
                ])
            ]),
        ])
        let bytes = try #require(Protobuf.encode(answer, as: "TxnResponse"))
        let decoded = try #require(Protobuf.decode(bytes[...], as: "TxnResponse"))
        #expect(decoded == answer)
        let read = EtcdTransaction.Answer(decoded)
        #expect(!read.succeeded && read.revision == 12)
        #expect(read.found(0) == [EtcdKeyValue(key: "/k", value: "h", createRevision: 3, lease: -2)])
    }

    @Test("decoding skips fields it does not know and refuses truncated bytes")
    func decoding() {
        // LeaseKeepAliveResponse{ID: 5, TTL: 10} with an unknown field 9 (varint) and 10 (fixed64).
        let bytes: [UInt8] = [0x10, 0x05, 0x48, 0x01, 0x51, 1, 2, 3, 4, 5, 6, 7, 8, 0x18, 0x0A]
        #expect(
            Protobuf.decode(bytes[...], as: "LeaseKeepAliveResponse") == .object(["ID": "5", "TTL": "10"]))
        #expect(Protobuf.decode([0x0A, 0x05, 0x01][...], as: "TxnResponse") == nil)
        #expect(Protobuf.decode([0x10, 0x80][...], as: "LeaseKeepAliveResponse") == nil)
    }

    @Test("gRPC frames: a 5-byte prefix each; whole ones are taken off the buffer, a partial one stays")
    func frames() {
        #expect(Protobuf.frame([0x08, 0x0A]) == [0, 0, 0, 0, 2, 0x08, 0x0A])
        var buffer = Protobuf.frame([1]) + Protobuf.frame([2, 3]) + [0, 0, 0, 0, 4, 9]
        let taken = Protobuf.frames(&buffer)
        #expect(taken.map { $0.map(Array.init) } == [[1], [2, 3]])
        #expect(buffer == [0, 0, 0, 0, 4, 9])
        var compressed: [UInt8] = [1, 0, 0, 0, 1, 7]
        #expect(Protobuf.frames(&compressed).count == 1 && compressed.isEmpty)
    }
}
