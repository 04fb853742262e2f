/// A concurrency group (`ConcurrencyGroup=NAME[:SIZE]`): at most `size` runs of its tasks run at a
/// time, across tasks; the others wait their turn in order, holding no `MaxConcurrentRuns=` slot.
public struct ConcurrencyGroup: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var size: Int

    public init(_ name: String, size: Int = 1) {
        self.name = name
        self.size = size
    }

    /// `NAME` or `NAME:SIZE`: NAME of letters, digits, `.`, `_` and `-`, SIZE from 1 to 1000; nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        guard !name.isEmpty, name.utf8.allSatisfy(Self.isNameByte) else { return nil }
        var size = 1
        if parts.count == 2 {
            guard let n = Int(parts[1]), (1...1000).contains(n) else { return nil }
            size = n
        }
        self.init(name, size: size)
    }

    /// `NAME`, or `NAME:SIZE` when the size is not 1.
    public var description: String { size == 1 ? name : "\(name):\(size)" }

    private static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F
            || b == 0x2D
    }
}
