/// `CatchUp=`: what happens to timer elapses missed while taskd was down (with `Persistent=`) or
/// the system slept.
public enum CatchUpPolicy: String, Hashable, Sendable {
    /// They are skipped: the next elapse after now is armed.
    case none
    /// One run (trigger `catchup`) for the latest of them, as systemd's `Persistent=` does.
    case latest
    /// One run per missed elapse, oldest first, each with its own scheduled time (at most
    /// `CatchUpPolicy.limit`, the latest ones).
    case all

    /// The most runs `all` makes at once.
    public static let limit = 100
}
