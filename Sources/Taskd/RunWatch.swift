import TaskdProtocol

/// A client following some runs (`Wake` with `"more": true`) until each has ended.
struct RunWatch: Sendable {
    var remaining: Set<String>
    var continuation: AsyncStream<RunInfo>.Continuation
}
