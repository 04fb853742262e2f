/// Turns a byte stream into lines: splits on newlines, cuts lines longer than `maxLineLength`
/// bytes, and reads a leading `<N>` (N = 0…7) as the line's priority.
public struct LineSplitter: Sendable {
    public static let defaultMaxLineLength = 4096
    /// Notify lines carry a `RESULT=` or `CHECKPOINT=` of up to 64 KiB.
    public static let notifyMaxLineLength = 65536 + 16

    public let stream: OutputLine.Stream
    public let maxLineLength: Int
    private var pending: [UInt8] = []

    /// `pending`: the start of a line read before (by an earlier image of taskd, an upgrade).
    public init(
        stream: OutputLine.Stream, maxLineLength: Int? = nil, pending: [UInt8] = []
    ) {
        self.stream = stream
        self.maxLineLength =
            maxLineLength ?? (stream == .notify ? Self.notifyMaxLineLength : Self.defaultMaxLineLength)
        self.pending = pending
    }

    /// The start of a line not yet ended.
    public var unfinished: [UInt8] { pending }

    /// The complete lines in `bytes` (with what came before).
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [OutputLine] {
        var lines: [OutputLine] = []
        for b in bytes {
            if b == 0x0A {
                lines.append(line(pending))
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(b)
                if pending.count >= maxLineLength {
                    lines.append(line(pending))
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        return lines
    }

    /// What remains after the stream ended: the last line if it had no newline.
    public mutating func finish() -> [OutputLine] {
        defer { pending.removeAll() }
        return pending.isEmpty ? [] : [line(pending)]
    }

    private func line(_ bytes: [UInt8]) -> OutputLine {
        var body = bytes[...]
        if body.last == 0x0D { body = body.dropLast() }
        var priority = 6
        if body.count >= 3, body[body.startIndex] == UInt8(ascii: "<"), body[body.startIndex + 2] == UInt8(ascii: ">"),
            (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(body[body.startIndex + 1])
        {
            priority = Int(body[body.startIndex + 1] - UInt8(ascii: "0"))
            body = body.dropFirst(3)
        }
        return OutputLine(stream: stream, priority: priority, text: String(decoding: body, as: UTF8.self))
    }
}
