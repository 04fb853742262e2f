import TaskdProtocol

/// The calls of a connection that wait for its serving task: an `AsyncStream` made on first use,
/// finished (also if made later) once the connection is.
struct CallQueue: Sendable {
    private var pair: (stream: AsyncStream<VarlinkCall>, continuation: AsyncStream<VarlinkCall>.Continuation)?
    private var finished = false

    mutating func stream() -> AsyncStream<VarlinkCall> { made().stream }

    mutating func yield(_ call: VarlinkCall) { made().continuation.yield(call) }

    mutating func finish() {
        finished = true
        pair?.continuation.finish()
    }

    private mutating func made() -> (
        stream: AsyncStream<VarlinkCall>, continuation: AsyncStream<VarlinkCall>.Continuation
    ) {
        if let pair { return pair }
        let made = AsyncStream.makeStream(of: VarlinkCall.self)
        if finished { made.continuation.finish() }
        pair = made
        return made
    }
}
