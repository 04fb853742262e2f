/// Splits a value into words as systemd's `extract_first_word(…, EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE)`:
/// white space separates, single and double quotes group, and C escapes (`\n`, `\t`, `\\`, `\"`,
/// `\xHH`, `\s` for a space) are decoded.
public enum WordSplitter {
    public static func split(_ value: String) throws(WordSplitError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var it = Array(value).makeIterator()
        while let c = it.next() {
            if c == "\\" {
                guard let e = it.next() else { throw WordSplitError(message: "trailing backslash") }
                current.append(try unescape(e, &it))
                inWord = true
            } else if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c
                inWord = true
            } else if c.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(c)
                inWord = true
            }
        }
        if let q = quote { throw WordSplitError(message: "unterminated \(q) quote") }
        if inWord { words.append(current) }
        return words
    }

    private static func unescape(_ e: Character, _ it: inout IndexingIterator<[Character]>) throws(WordSplitError)
        -> Character
    {
        switch e {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "a": return "\u{07}"
        case "b": return "\u{08}"
        case "f": return "\u{0C}"
        case "v": return "\u{0B}"
        case "s": return " "
        case "\\", "\"", "'", " ": return e
        case "x":
            guard let h = it.next(), let l = it.next(), let v = UInt8(String([h, l]), radix: 16), v > 0 else {
                throw WordSplitError(message: "invalid \\x escape")
            }
            return Character(Unicode.Scalar(v))
        default: throw WordSplitError(message: "unknown escape '\\\(e)'")
        }
    }
}

/// A value that could not be split into words.
public struct WordSplitError: Error, Hashable, Sendable {
    public var message: String
}
