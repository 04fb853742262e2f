import Testing

@testable import TaskdProtocol

/// The byte-level writer against a scalar-by-scalar reference escaper and the parser.
struct JSONWriterTests {
    /// The straightforward escaper the writer replaced: the oracle.
    static func reference(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static let alphabet: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1}",
        "\u{1F}", "\u{7F}", "é", "ß", "\u{2028}", "€", "😀", "/",
    ]

    @Test("every string of up to 3 scalars from a hostile alphabet escapes exactly as the reference does")
    func stringsMatchTheReference() throws {
        var strings = [""]
        var level = [""]
        for _ in 0..<3 {
            level = level.flatMap { prefix in Self.alphabet.map { prefix + String($0) } }
            strings += level
        }
        #expect(strings.count == 1 + 19 + 361 + 6_859)
        for s in strings {
            var out: [UInt8] = []
            JSONValue.writeString(s, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == Self.reference(s), "\(Array(s.unicodeScalars))")
            #expect(try JSONParser.parse(String(decoding: out, as: UTF8.self)) == .string(s))
        }
    }

    @Test("a long text, escapes among long clean runs, after bytes already written, as the reference")
    func longTextMatchesTheReference() throws {
        // Every alphabet scalar at places spread by a step, the rest clean: runs of 0 to 12 bytes.
        for (length, step) in [(0, 1), (1, 1), (700, 3), (3_001, 7), (5_000, 13)] {
            let scalars = (0..<length).map { i -> Unicode.Scalar in
                (i * 7_919) % step == 0 ? Self.alphabet[(i * 31) % Self.alphabet.count] : "m"
            }
            let s = String(String.UnicodeScalarView(scalars))
            var out = Array("{\"text\":".utf8)
            JSONValue.writeString(s, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == "{\"text\":" + Self.reference(s))
        }
    }

    @Test(arguments: [0, 1, -1, 9, 10, -10, 123_456_789, Int64.max, Int64.min, Int64.min + 1])
    func integersPrintAsStringDoes(_ i: Int64) {
        var out: [UInt8] = []
        JSONValue.writeInteger(i, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == String(i))
    }

    @Test("a nested value writes to bytes and parses back to itself")
    func nestedRoundTrip() throws {
        let v: JSONValue = .object([
            "b": .array([.int(-5), .double(0.25), .double(3), .null, .bool(false)]), "a": .string("x\"y"),
            "é": .object([:]), "e": .array([]),
        ])
        #expect(v.description == #"{"a":"x\"y","b":[-5,0.25,3,null,false],"e":[],"é":{}}"#)
        #expect(v.bytes == Array(v.description.utf8))
        // An integral double prints as an integer, and so reads back as one.
        guard case .object(var o) = v else { return }
        o["b"] = .array([.int(-5), .double(0.25), .int(3), .null, .bool(false)])
        #expect(try JSONParser.parse(v.description) == .object(o))
    }
}
