import Testing

@testable import TaskdProtocol

@Suite("JSON: strict parsing and deterministic output")
struct JSONParserTests {
    @Test(arguments: [
        ("null", JSONValue.null), ("true", .bool(true)), ("-12", .int(-12)), ("1.5e3", .double(1500)),
        ("\"a\\u00e9\\n\"", .string("aé\n")), ("\"\\ud83d\\ude00\"", .string("😀")),
        ("\"io.taskd.Scheduler.Wake\"", .string("io.taskd.Scheduler.Wake")),
        ("\"plain, then \\\"quoted\\\"\"", .string("plain, then \"quoted\"")),
        ("\"é\"", .string("é")), ("\"\"", .string("")),
        ("[1, [2, {}]]", .array([1, .array([2, .object([:])])])),
        (" {\"b\": 1, \"a\": [true, null]} ", .object(["a": .array([true, .null]), "b": 1])),
    ])
    func accepts(text: String, expected: JSONValue) throws {
        #expect(try JSONParser.parse(text) == expected)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "01", "1.", "-", "\"\\x\"", "\"\u{01}\"", "tru", "nul",
        "\"\\ud800\"", "\"\\udc00\"", "[1] 2", "{a:1}", "'single'", "NaN", "\"unterminated",
    ])
    func rejects(text: String) {
        #expect(throws: JSONError.self) { try JSONParser.parse(text) }
    }

    @Test("invalid UTF-8 inside a string is rejected")
    func invalidUTF8() {
        #expect(throws: JSONError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONError.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test("nesting deeper than the limit is rejected without recursion trouble")
    func depth() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONError.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 63) + String(repeating: "]", count: 63)
        #expect(throws: Never.self) { try JSONParser.parse(ok) }
    }

    @Test("output is compact with sorted keys and escapes, and parses back to the same value")
    func roundTrip() throws {
        let v: JSONValue = .object(["z": "a\"b\\c\n\u{01}", "a": .array([.int(1), .double(0.5), .null, true])])
        #expect(v.description == #"{"a":[1,0.5,null,true],"z":"a\"b\\c\n\u0001"}"#)
        #expect(try JSONParser.parse(v.description) == v)
    }
}
