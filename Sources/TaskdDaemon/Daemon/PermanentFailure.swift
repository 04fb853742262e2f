/// Thrown by a Swift handler to fail its run and ask for no retry (a command exits with
/// `RetryPolicy.noRetryExitStatus`, 100, instead). Any other error is retried per `MaxAttempts=`.
public struct PermanentFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}
