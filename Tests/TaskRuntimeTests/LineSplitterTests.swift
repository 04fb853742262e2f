import Testing

@testable import TaskRuntime

@Suite("Output lines: splitting, length bound, <N> priority prefix")
struct LineSplitterTests {
    @Test func lines() {
        var s = LineSplitter(stream: .stdout)
        #expect(s.feed(Array("one\ntw".utf8)).map(\.text) == ["one"])
        #expect(
            s.feed(Array("o\r\n<3>three\n<9>nine\n".utf8)).map { "\($0.priority):\($0.text)" } == [
                "6:two", "3:three", "6:<9>nine",
            ])
        #expect(s.feed(Array("tail".utf8)).isEmpty)
        #expect(s.finish().map(\.text) == ["tail"])
        #expect(s.finish().isEmpty)
    }

    @Test("a line longer than the bound is cut into pieces of the bound")
    func bound() {
        var s = LineSplitter(stream: .stderr, maxLineLength: 4)
        let lines = s.feed(Array("abcdefghij\n".utf8))
        #expect(lines.map(\.text) == ["abcd", "efgh", "ij"])
        #expect(lines.allSatisfy { $0.stream == .stderr })
    }
}
