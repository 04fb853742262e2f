import TaskdConfig
import Testing

@testable import TaskdFleet
@testable import TaskdProtocol

/// etcd's requests are JSON values built from data (keys and values base64, 64-bit numbers as
/// strings, a key with quotes or spaces carried as it is), encoded as etcd's protobuf messages.
struct EtcdRequestTests {
    @Test("base64 encodes as RFC 4648 with padding, and decodes back")
    func base64() {
        let cases = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "/taskd/a b\"c": "L3Rhc2tkL2EgYiJj"]
        for (text, encoded) in cases {
            #expect(Base64.encode(text) == encoded)
            #expect(Base64.decodeText(encoded) == text)
        }
        let bytes: [UInt8] = [0, 0xFF, 0xFE, 0x80, 0x7F]
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
    }

    @Test("a slot's claim: create-if-absent on the claim and the done key, put on the lease, else get both")
    func claimTransaction() throws {
        var txn = EtcdTransaction()
        txn.created("/taskd/f/claims/once/t/1", at: 0)
        txn.created("/taskd/f/done/t/1", at: 0)
        txn.success = [.put("/taskd/f/claims/once/t/1", "web \"1\"", lease: 7_587_869_402_431_234_567)]
        txn.failure = [.get("/taskd/f/claims/once/t/1"), .get("/taskd/f/done/t/1")]
        let request = EtcdRequest.txn(txn)
        #expect(request.path == "/etcdserverpb.KV/Txn" && request.message == "TxnRequest")
        let body = request.body
        let compare = try #require(body["compare"]?.arrayValue?.first)
        #expect(compare["key"]?.stringValue.flatMap(Base64.decodeText) == "/taskd/f/claims/once/t/1")
        #expect(compare["target"] == "CREATE" && compare["result"] == "EQUAL" && compare["create_revision"] == "0")
        let put = try #require(body["success"]?.arrayValue?.first?["request_put"])
        #expect(put["value"]?.stringValue.flatMap(Base64.decodeText) == "web \"1\"")
        #expect(put["lease"] == "7587869402431234567")
        let gets = body["failure"]?.arrayValue?.compactMap { $0["request_range"]?["key"]?.stringValue } ?? []
        #expect(gets.compactMap(Base64.decodeText) == ["/taskd/f/claims/once/t/1", "/taskd/f/done/t/1"])
        // The text sent is the value's own (sorted keys): parsed back, the same value.
        #expect(try JSONParser.parse(body.bytes) == body)
    }

    @Test("a range delete, a list by prefix oldest first, a put without a lease")
    func keyRequests() {
        #expect(EtcdRequest.prefixEnd("/taskd/f/") == "/taskd/f0")
        #expect(EtcdRequest.prefixEnd("") == "\0")
        let list = EtcdRequest.list(prefix: "/taskd/f/hosts/")
        #expect(list.path == "/etcdserverpb.KV/Range")
        #expect(list.body["range_end"]?.stringValue.flatMap(Base64.decodeText) == "/taskd/f/hosts0")
        #expect(list.body["sort_order"] == "ASCEND" && list.body["sort_target"] == "CREATE")
        let delete = EtcdOperation.delete("/a/0", end: "/a/5").json["request_delete_range"]
        #expect(delete?["range_end"]?.stringValue.flatMap(Base64.decodeText) == "/a/5")
        let put = EtcdRequest.put("/k", "v")
        #expect(put.path == "/etcdserverpb.KV/Put" && put.body["lease"] == nil)
    }

    @Test("the lease's requests carry its id as a decimal string, to the Lease service")
    func leaseRequests() {
        let grant = EtcdRequest.grant(seconds: 10)
        #expect(grant.path == "/etcdserverpb.Lease/LeaseGrant" && grant.body == .object(["TTL": "10"]))
        #expect(grant.message == "LeaseGrantRequest" && grant.answer == "LeaseGrantResponse")
        #expect(EtcdRequest.keepAlive(-5).body == .object(["ID": "-5"]))
        #expect(EtcdRequest.keepAlive(-5).path == "/etcdserverpb.Lease/LeaseKeepAlive")
        #expect(EtcdRequest.revoke(42).body == .object(["ID": "42"]))
    }

    @Test("a watch of the deletions under the claims: NOPUT, from a revision when one is given")
    func watchRequest() {
        let now = EtcdRequest.watchDeletions(prefix: "/taskd/f/claims/", from: 0)
        #expect(now.path == "/etcdserverpb.Watch/Watch" && now.answer == "WatchResponse")
        let create = now.body["create_request"]
        #expect(create?["filters"] == .array(["NOPUT"]) && create?["start_revision"] == nil)
        #expect(create?["range_end"]?.stringValue.flatMap(Base64.decodeText) == "/taskd/f/claims0")
        #expect(EtcdRequest.watchDeletions(prefix: "/p/", from: 99).body["create_request"]?["start_revision"] == "99")
    }

    @Test("a transaction's answer as etcd gives it (decoded): revisions and leases as strings")
    func answer() throws {
        let text = """
            {"header":{"revision":"12"},"responses":[{"response_range":{"header":{"revision":"12"},
            "kvs":[{"key":"L2EvYg==","create_revision":"2","mod_revision":"2","version":"1","value":"aDE=",
            "lease":"2324035882736543495"}],"count":"1"}},{"response_range":{"header":{"revision":"12"}}}]}
            """
        let answer = EtcdTransaction.Answer(try JSONParser.parse(text))
        #expect(!answer.succeeded && answer.revision == 12)
        #expect(
            answer.found(0) == [
                EtcdKeyValue(key: "/a/b", value: "h1", createRevision: 2, lease: 2_324_035_882_736_543_495)
            ])
        #expect(answer.found(1).isEmpty && answer.found(2).isEmpty)
    }

    @Test("an endpoint without a scheme is http, or https when TLS files are set")
    func baseURL() {
        #expect(EtcdRPC.baseURL("127.0.0.1:2379", tls: false) == "http://127.0.0.1:2379")
        #expect(EtcdRPC.baseURL("etcd1:2379", tls: true) == "https://etcd1:2379")
        #expect(EtcdRPC.baseURL("http://etcd1:2379/", tls: true) == "http://etcd1:2379")
    }
}
