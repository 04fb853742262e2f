import Testing

@testable import TaskScheduling

@Suite("HexID: fixed-width lower-case hex ids")
struct HexIDTests {
    @Test(
        "one word is 16 digits, two are 32, zero-padded",
        arguments: [
            (UInt64(0), UInt64?.none, "0000000000000000"),
            (0xf, nil, "000000000000000f"),
            (0xdead_beef_0123_4567, nil, "deadbeef01234567"),
            (.max, 0, "ffffffffffffffff0000000000000000"),
            (1, 0xabc, "00000000000000010000000000000abc"),
        ])
    func format(high: UInt64, low: UInt64?, expected: String) {
        #expect(HexID.make(high, low) == expected)
    }

    @Test("every word reads back as itself (String(radix:), padded)")
    func roundTrip() {
        var random = SeededRandom(seed: 3)
        for _ in 0..<1000 {
            let (a, b) = (random.next(), random.next())
            let id = HexID.make(a, b)
            #expect(UInt64(id.prefix(16), radix: 16) == a)
            #expect(UInt64(id.suffix(16), radix: 16) == b)
        }
    }
}
