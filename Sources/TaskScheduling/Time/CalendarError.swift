/// A calendar expression that does not parse or cannot be valid, with the part at fault.
public struct CalendarError: Error, Hashable, Sendable, CustomStringConvertible {
    public var expression: String
    public var reason: String
    public var description: String { "invalid calendar expression '\(expression)': \(reason)" }
}
