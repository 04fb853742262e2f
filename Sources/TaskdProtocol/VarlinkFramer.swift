/// Splits a byte stream into Varlink messages, each ended by a NUL byte, refusing any message
/// longer than `maxMessageSize` (the stream is then unusable: the peer is misbehaving).
public struct VarlinkFramer: Sendable {
    /// 64 KiB, the request limit (docs/control-protocol.md, "Connection limits").
    public static let defaultMaxMessageSize = 64 * 1024

    public let maxMessageSize: Int
    private var buffer: [UInt8] = []
    private var scanned = 0

    public init(maxMessageSize: Int = VarlinkFramer.defaultMaxMessageSize) { self.maxMessageSize = maxMessageSize }

    /// Bytes received but not yet part of a complete message.
    public var pendingByteCount: Int { buffer.count }

    public mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// The next complete message without its NUL, nil if none is complete yet.
    public mutating func next() throws(VarlinkFramingError) -> [UInt8]? {
        if let end = buffer[scanned...].firstIndex(of: 0) {
            guard end <= maxMessageSize else { throw .messageTooLarge(limit: maxMessageSize) }
            let message = Array(buffer[..<end])
            buffer.removeSubrange(...end)
            scanned = 0
            return message
        }
        scanned = buffer.count
        if buffer.count > maxMessageSize { throw .messageTooLarge(limit: maxMessageSize) }
        return nil
    }
}

/// A stream that broke the framing rules.
public enum VarlinkFramingError: Error, Hashable, Sendable, CustomStringConvertible {
    case messageTooLarge(limit: Int)

    public var description: String {
        switch self {
        case .messageTooLarge(let limit): return "message exceeds \(limit) bytes"
        }
    }
}
