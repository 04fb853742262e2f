/// The control socket could not be set up.
public struct SocketError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
