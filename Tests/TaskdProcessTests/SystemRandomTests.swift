import Testing

@testable import TaskdProcess

@Suite("SystemRandom: getrandom, 32 words per system call")
struct SystemRandomTests {
    @Test("draws across several refills are distinct and every bit varies")
    func distinctAcrossRefills() {
        var random = SystemRandom()
        let draws = (0..<200).map { _ in random.next() }  // six refills of 32 words
        #expect(Set(draws).count == draws.count)
        #expect(draws.reduce(0, |) == .max)
        #expect(draws.reduce(.max, &) == 0)
    }

    @Test("two generators do not repeat each other")
    func independent() {
        var a = SystemRandom()
        var b = SystemRandom()
        let first = (0..<40).map { _ in a.next() }
        let second = (0..<40).map { _ in b.next() }
        #expect(Set(first).isDisjoint(with: second))
    }
}
