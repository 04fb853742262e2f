import Testing

@testable import TaskRuntime

@Suite("argv and envp made in one allocation")
struct CStringArrayTests {
    @Test("each string comes back whole and NUL-terminated, empty and non-ASCII ones too, then nil")
    func roundTrip() {
        let strings = ["/bin/echo", "", "héllo wörld", "TASKD_TASK=appRefresh", String(repeating: "x", count: 5000)]
        let back = CStringArray.with(strings) { pointers -> [String?] in
            pointers.map { $0.map { String(cString: $0) } }
        }
        #expect(back == strings.map { Optional($0) } + [nil])
    }

    @Test("no strings: just the nil that ends the array")
    func empty() {
        #expect(CStringArray.with([]) { $0.count == 1 && $0[0] == nil })
    }
}
