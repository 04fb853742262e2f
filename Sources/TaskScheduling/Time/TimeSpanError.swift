/// Why a time span did not parse.
public struct TimeSpanError: Error, Equatable, Sendable, CustomStringConvertible {
    public var text: String
    public var reason: String
    /// systemd's ERANGE (negative, or too large) rather than EINVAL (not a time span at all).
    public var outOfRange = false
    public var description: String { "invalid time span '\(text)': \(reason)" }
}
