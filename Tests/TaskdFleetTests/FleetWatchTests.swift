import TaskdConfig
import Testing

@testable import TaskdFleet
@testable import TaskdProtocol

/// The watch stream's messages (`WatchResponse`s), decoded.
struct FleetWatchTests {
    func client() -> FleetClient {
        var settings = FleetSettings()
        settings.endpoints = ["127.0.0.1:1"]
        settings.name = "f"
        return FleetClient(settings: settings, host: "h", events: { _ in })
    }

    @Test("created: the watch is up from the revision after the header's; deletions move the revision on")
    func createdThenDeleted() throws {
        let fleet = client()
        var next: Int64 = 0
        let created = try JSONParser.parse(#"{"header":{"revision":"3"},"created":true}"#)
        #expect(fleet.handle(created, next: &next) && next == 4)
        #expect(fleet.state.withLock { $0.watchUp && $0.watchRevision == 3 })
        let key = Base64.encode("/taskd/f/claims/once/t/00000000000000000001")
        let deleted = try JSONParser.parse(
            #"{"header":{"revision":"9"},"events":[{"type":"DELETE","kv":{"key":"\#(key)","mod_revision":"8"}}]}"#
        )
        #expect(fleet.handle(deleted, next: &next) && next == 9)
        #expect(fleet.state.withLock { $0.watchRevision == 8 })
    }

    @Test("a compaction restarts the watch from now; a cancel ends the stream")
    func endings() throws {
        let fleet = client()
        var next: Int64 = 40
        let compacted = try JSONParser.parse(
            #"{"header":{"revision":"50"},"compact_revision":"45","canceled":true}"#)
        #expect(!fleet.handle(compacted, next: &next) && next == 0)
        next = 40
        #expect(!fleet.handle(try JSONParser.parse(#"{"canceled":true}"#), next: &next) && next == 40)
    }
}
