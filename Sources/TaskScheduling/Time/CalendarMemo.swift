/// One `OnCalendar=` entry's last search: the elapse it found strictly after `after`. It answers
/// again for any search after an instant in `after ..< next` (nothing elapses in between), so a
/// task with many entries computes only the one that fired. Cleared when the time zone changes.
struct CalendarMemo: Hashable, Sendable {
    var after: UInt64
    var next: UInt64?

    /// The memoized elapse, if it is the answer for a search strictly after `realtime`.
    func answer(after realtime: UInt64) -> UInt64?? {
        guard after <= realtime, realtime < (next ?? .max) else { return nil }
        return .some(next)
    }
}
