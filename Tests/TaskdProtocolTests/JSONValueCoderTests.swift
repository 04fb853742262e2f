import FoundationEssentials
import Testing

@testable import TaskdProtocol

/// A value that exercises every container and primitive the synthesized conformances use.
private struct Sample: Codable, Equatable {
    enum Mood: String, Codable { case calm, stormy }
    enum Level: Int, Codable { case low = 1, high = 9 }
    enum Shape: Codable, Equatable {
        case point
        case circle(radius: Double)
        case box(Int, Int)
    }
    struct Step: Codable, Equatable {
        var n: Int
        var label: String?
    }

    var city: String
    var steps: Int
    var small: Int8
    var bytes: [UInt8]
    var wide: UInt64
    var negative: Int64
    var ratio: Double
    var fraction: Float
    var flag: Bool
    var note: String?
    var mood: Mood
    var level: Level
    var shapes: [Shape]
    var items: [Step]
    var gaps: [Int?]
    var byName: [String: Int]
    var byNumber: [Int: String]
    var nested: [[String]]
}

private let sample = Sample(
    city: "Oslo \"north\" \u{e9}\n", steps: 20, small: -128, bytes: [0, 255], wide: UInt64(Int64.max),
    negative: Int64.min, ratio: 0.1, fraction: 2.5, flag: true, note: nil, mood: .stormy, level: .high,
    shapes: [.point, .circle(radius: 1.5), .box(2, 3)], items: [.init(n: 1, label: "a"), .init(n: 2, label: nil)],
    gaps: [nil, 1, nil], byName: ["b": 2, "a": 1], byNumber: [10: "ten", 2: "two"], nested: [[], ["x", "y"]])

private class Base: Codable {
    var id = 0
    init(id: Int) { self.id = id }
}

private final class Derived: Base {
    var extra = ""
    private enum CodingKeys: String, CodingKey { case extra }

    init(id: Int, extra: String) {
        self.extra = extra
        super.init(id: id)
    }

    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        extra = try c.decode(String.self, forKey: .extra)
        try super.init(from: c.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(extra, forKey: .extra)
        try super.encode(to: c.superEncoder())
    }
}

private struct Empty: Codable, Equatable {}

private struct Request: Decodable {
    var city: String
    var steps: Int
    var items: [Sample.Step]?
}

@Suite("JSON: Codable values to and from JSONValue, as Foundation's JSONEncoder and JSONDecoder")
struct JSONValueCoderTests {
    /// Foundation's coders as the oracle: the same text, and the same value back from either.
    func foundationText<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("every container and primitive encodes as JSONEncoder with .sortedKeys writes it")
    func encodesAsFoundation() throws {
        let ours = try JSONValueEncoder().encode(sample)
        let theirs = try foundationText(sample)
        #expect(ours == (try JSONParser.parse(theirs)))
        #expect(ours.description == theirs)
    }

    @Test("what JSONEncoder writes decodes to the same value, and ours round-trips")
    func decodesAsFoundation() throws {
        let theirs = try foundationText(sample)
        #expect(try JSONValueDecoder().decode(Sample.self, from: theirs) == sample)
        let ours = try JSONValueEncoder().encode(sample)
        #expect(try JSONValueDecoder().decode(Sample.self, from: ours) == sample)
        #expect(try JSONDecoder().decode(Sample.self, from: Data(ours.description.utf8)) == sample)
    }

    @Test("super encoders and decoders nest the superclass under \"super\"")
    func classHierarchy() throws {
        let value = Derived(id: 7, extra: "x")
        let ours = try JSONValueEncoder().encode(value)
        #expect(ours.description == #"{"extra":"x","super":{"id":7}}"#)
        #expect(ours.description == (try foundationText(value)))
        let back = try JSONValueDecoder().decode(Derived.self, from: ours)
        #expect(back.id == 7 && back.extra == "x")
    }

    @Test("top-level fragments and a value that encodes nothing")
    func fragments() throws {
        #expect(try JSONValueEncoder().encode(3) == .int(3))
        #expect(try JSONValueEncoder().encode("a") == .string("a"))
        #expect(try JSONValueEncoder().encode(Optional<Int>.none) == .null)
        #expect(try JSONValueEncoder().encode(Empty()).description == (try foundationText(Empty())))
        #expect(try JSONValueDecoder().decode(Int?.self, from: "null") == nil)
        #expect(try JSONValueDecoder().decode([Int].self, from: " [1, 2.0] ") == [1, 2])
    }

    @Test("numbers that JSON cannot hold are refused, naming the value and where it was")
    func invalidNumbers() throws {
        struct Holder<T: Encodable>: Encodable { var value: [T] }
        for bad in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Holder(value: [bad])) }
        }
        do {
            _ = try JSONValueEncoder().encode(Holder(value: [UInt64.max]))
            Issue.record("UInt64.max encoded")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(JSONValueDecoder.pathText(context.codingPath) == "value[0]")
            #expect(context.debugDescription == "18446744073709551615 is above Int64.max")
        }
    }

    @Test(
        "a payload that does not decode says what was wrong and where",
        arguments: [
            (#"{"steps": 1}"#, "city: missing"),
            (#"{"city": "Oslo", "steps": "many"}"#, "steps: expected Int, found a string"),
            (#"{"city": "Oslo", "steps": null}"#, "steps: expected Int, found null"),
            (#"{"city": "Oslo", "steps": 2.5}"#, "steps: the number 2.5 does not fit in Int"),
            (
                #"{"city": "Oslo", "steps": 1, "items": [{"n": 1}, {"n": true}]}"#,
                "items[1].n: expected Int, found a boolean"
            ),
            (#"{"city": "Oslo", "steps": 1, "items": {}}"#, "items: expected an array, found an object"),
            (#"[1]"#, "the top level: expected an object, found an array"),
            (#"{"city": "#, "the top level: invalid JSON at byte 9: unexpected end of input"),
        ])
    func decodingErrors(text: String, message: String) {
        do {
            _ = try JSONValueDecoder().decode(Request.self, from: text)
            Issue.record("\(text) decoded")
        } catch {
            #expect(JSONValueDecoder.describe(error) == message)
        }
    }

    @Test("integers are range-checked, and an array's end is an error rather than a value")
    func ranges() throws {
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Int8.self, from: "300") }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(UInt.self, from: "-1") }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Float.self, from: "1e300") }
        #expect(try JSONValueDecoder().decode(UInt8.self, from: "255") == 255)
        struct Pair: Decodable {
            var a: Int
            var b: Int
            init(from decoder: any Decoder) throws {
                var c = try decoder.unkeyedContainer()
                a = try c.decode(Int.self)
                b = try c.decode(Int.self)
            }
        }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Pair.self, from: "[1]") }
        #expect(try JSONValueDecoder().decode(Pair.self, from: "[1, 2]").b == 2)
    }
}
