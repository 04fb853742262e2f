/// A retry waiting for its backoff to pass: the attempt it will be and what it carries over.
public struct PendingRetry: Hashable, Sendable {
    /// The monotonic instant the retry fires.
    public var due: UInt64
    public var attempt: Int
    public var wakeID: String?
    public var payload: String?
    /// The acknowledged wakes the retry still answers for.
    public var records: [String]
    /// The run whose failure it retries.
    public var failedRunID: String
}
