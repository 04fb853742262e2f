/// Why the hand-off of an upgrade could not be read.
struct HandoffError: Error, Sendable, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
