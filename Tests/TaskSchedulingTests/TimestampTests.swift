import Testing

@testable import TaskScheduling

@Suite("Timestamps: --base-time forms and relative distances")
struct TimestampTests {
    @Test(arguments: [
        ("@1767225600", UInt64(1_767_225_600_000_000)), ("@1767225600.25", 1_767_225_600_250_000),
        ("2026-01-01 00:00:00 UTC", 1_767_225_600_000_000), ("2026-01-01 UTC", 1_767_225_600_000_000),
        ("2026-01-01 01:00 Europe/Berlin", 1_767_225_600_000_000), ("2026-01-01 00:00:00.5 UTC", 1_767_225_600_500_000),
        ("now", 42),
    ])
    func parses(text: String, expected: UInt64) throws {
        #expect(try Timestamp.parse(text, now: 42) == expected)
    }

    @Test(arguments: [
        "", "yesterday-ish", "2026-13-01", "2026-01-01 25:00", "2026-01-01 10:00:00.x UTC", "@x", "1969-12-31 UTC",
    ])
    func rejects(text: String) {
        #expect(throws: TimestampError.self) { try Timestamp.parse(text, now: 0) }
    }

    @Test("relative distances as format_timestamp_relative() words them")
    func relative() {
        let now: UInt64 = 1_000_000_000_000_000
        let table: [(Int64, String)] = [
            (0, "now"), (500, "500us left"), (-2_000, "2ms ago"), (3_000_000, "3s left"), (90_000_000, "1min 30s left"),
            (720_000_000, "12min left"), (5_400_000_000, "1h 30min left"), (25_200_000_000, "7h left"),
            (-97_200_000_000, "1 day 3h ago"), (259_200_000_000, "3 days left"),
            (777_600_000_000, "1 week 2 days left"),
            (-20_000_000_000_000, "7 months 18 days ago"), (40_000_000_000_000, "1 year 3 months left"),
        ]
        for (delta, text) in table {
            let t = delta >= 0 ? now + UInt64(delta) : now - UInt64(-delta)
            #expect(Timestamp.relative(t, now: now) == text, "\(delta)")
        }
    }
}
