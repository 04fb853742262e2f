import TaskdProtocol

/// A client following some runs (`Wake` with `"more": true`): each later state of them goes to
/// `notify`, on the event loop, until each has ended.
struct RunWatch: Sendable {
    var remaining: Set<String>
    let notify: @Sendable (RunInfo) -> Void
}
