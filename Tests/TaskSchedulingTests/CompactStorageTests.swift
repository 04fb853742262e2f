import Testing

@testable import TaskScheduling

/// The compact forms that keep 10,000 tasks small behave as the plain values they replace.
@Suite("Compact storage: calendar chains and out-of-line fields")
struct CompactStorageTests {
    @Test("a chain of one component and one of several index, compare and hash like their arrays")
    func chains() throws {
        let one = CalendarComponent(start: 5)
        let range = CalendarComponent(start: 8, stop: 14, repeat: 2)
        let single = CalendarChain([one])
        let several = CalendarChain([one, range])
        #expect(Array(single) == [one])
        #expect(Array(several) == [one, range])
        #expect(single.count == 1 && several.count == 2 && CalendarChain([]).isEmpty)
        #expect(single == [one] && several == [one, range] && single != several)
        #expect(single.hashValue == CalendarChain([one]).hashValue)
        // Parsed twice, and built by hand: reload compares definitions, so these must be equal.
        let parsed = try CalendarSpec(parsing: "*-*-* 08,12..14/2:05:00")
        #expect(parsed == (try CalendarSpec(parsing: "*-*-* 08,12..14/2:05:00")))
        #expect(parsed.minute == [one])
        #expect(
            parsed.hour.map(Array.init) == [
                CalendarComponent(start: 8), CalendarComponent(start: 12, stop: 14, repeat: 2),
            ])
        #expect(parsed.description == "*-*-* 08,12..14/2:05:00")
    }

    struct Holder: Hashable {
        @OutOfLine var run: String?
    }

    @Test("an out-of-line field reads back what was set, copies keep their own, equality is by value")
    func outOfLine() {
        var a = Holder(run: nil)
        #expect(a.run == nil)
        a.run = "first"
        let copy = a
        a.run = "second"
        #expect(copy.run == "first" && a.run == "second")
        a.run = nil
        #expect(a.run == nil && a != copy)
        let twin = Holder(run: "first")
        #expect(twin == copy && twin.hashValue == copy.hashValue)
    }
}
