import TaskdConfig
import Testing

@testable import TaskdFleet
@testable import TaskdProtocol

/// etcd's answers are classified by their gRPC code and curl's result, never by their text.
struct FleetErrorTests {
    @Test("gRPC codes: NOT_FOUND is the lease gone, permission and argument codes refusals, the rest unreachable")
    func grpcCodes() {
        #expect(FleetError.kind(grpcCode: 5) == .leaseGone)
        for code: Int32 in [3, 7, 9, 11, 12, 16] { #expect(FleetError.kind(grpcCode: code) == .refused) }
        for code: Int32 in [1, 2, 4, 8, 10, 13, 14, 15] { #expect(FleetError.kind(grpcCode: code) == .unreachable) }
    }

    @Test("an answer's status decides, whatever its message says")
    func answers() throws {
        let gone = try #require(
            FleetError.answered(
                httpStatus: 200, grpcStatus: 5, message: "etcdserver: requested lease not found",
                endpoint: "http://m1:2379"))
        #expect(gone.leaseGone && gone.description == "etcd: http://m1:2379: etcdserver: requested lease not found")
        // The code decides, not the words: a refusal worded as anything is a refusal.
        let denied = FleetError.answered(
            httpStatus: 200, grpcStatus: 7, message: "requested lease not found", endpoint: "e")
        #expect(denied?.kind == .refused)
        #expect(
            FleetError.answered(httpStatus: 200, grpcStatus: 14, message: "etcdserver: no leader", endpoint: "e")?.kind
                == .unreachable)
        #expect(
            FleetError.answered(httpStatus: 200, grpcStatus: 4, message: "", endpoint: "e")?.description
                == "etcd: e: gRPC status 4")
        #expect(FleetError.answered(httpStatus: 200, grpcStatus: 0, message: "", endpoint: "e") == nil)
        // Not gRPC's answer at all: a proxy's error page, or no status.
        #expect(FleetError.answered(httpStatus: 502, grpcStatus: -1, message: "", endpoint: "e")?.kind == .unreachable)
        #expect(FleetError.answered(httpStatus: 200, grpcStatus: -1, message: "", endpoint: "e")?.kind == .unreachable)
    }

    @Test("a member that refuses connections is a transport failure: unreachable, and the next member is asked")
    func transport() {
        var settings = FleetSettings()
        settings.endpoints = ["127.0.0.1:1", "http://127.0.0.1:2"]
        let etcd = EtcdRPC(settings, timeoutMS: 1000, connectTimeoutMS: 500)
        #expect(throws: FleetError.self) { try etcd.call(.grant(seconds: 5)) }
        do {
            _ = try etcd.call(.grant(seconds: 5))
        } catch {
            #expect(error.kind == .unreachable)
            // The last member asked names itself, with curl's result code (7: could not connect).
            #expect(
                error.description.hasPrefix("etcd: http://127.0.0.1:2: ")
                    && error.description.hasSuffix("(curl error 7)"))
        }
    }
}
