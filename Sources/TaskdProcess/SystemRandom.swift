import CTaskdShim

#if canImport(Glibc)
    import Glibc
#endif

/// The kernel's random numbers (`getrandom`), fetched 32 at a time: one system call per 32 draws,
/// where `SystemRandomNumberGenerator` makes one per draw (a run id takes two).
public struct SystemRandom: RandomNumberGenerator, Sendable {
    private var words: [UInt64] = []
    private var used = 0

    public init() {}

    public mutating func next() -> UInt64 {
        if used == words.count { refill() }
        used += 1
        return words[used - 1]
    }

    private mutating func refill() {
        var fresh = [UInt64](repeating: 0, count: 32)
        // Up to 256 bytes come whole once the kernel's pool is ready; anything else (EINTR, an old
        // kernel) falls back to the standard library's generator.
        let filled = fresh.withUnsafeMutableBytes { getrandom($0.baseAddress, $0.count, 0) }
        if filled != fresh.count * 8 {
            var system = SystemRandomNumberGenerator()
            for i in fresh.indices { fresh[i] = system.next() }
        }
        words = fresh
        used = 0
    }
}
