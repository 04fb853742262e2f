/// Identifiers made of random 64-bit words: 16 lower-case hex digits per word, zero-padded.
public enum HexID {
    /// `high` (and `low`, if given) as 16 (or 32) hex digits, in one allocation.
    public static func make(_ high: UInt64, _ low: UInt64? = nil) -> String {
        let count = low == nil ? 16 : 32
        return String(unsafeUninitializedCapacity: count) { digits in
            write(high, to: digits, at: 0)
            if let low { write(low, to: digits, at: 16) }
            return count
        }
    }

    private static func write(_ word: UInt64, to digits: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        for i in 0..<16 {
            let nibble = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * i)) & 0xf
            digits[offset + i] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
    }
}
