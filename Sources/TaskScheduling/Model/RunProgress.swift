/// What a running handler last said of its progress: `PROGRESS=3/250` and `STATUS=…` from a
/// command, `reportProgress(completed:total:)` and `setStatus(_:)` from a Swift handler.
public struct RunProgress: Hashable, Sendable {
    /// Units done, and of how many (nil: unknown).
    public var completed: Int64?
    public var total: Int64?
    /// A line of free text (at most 256 bytes kept).
    public var status: String?
    /// The monotonic instant of the last report (for `ProgressTimeoutSec=`).
    public var reportedAt: UInt64

    public init(completed: Int64? = nil, total: Int64? = nil, status: String? = nil, reportedAt: UInt64) {
        self.completed = completed
        self.total = total
        self.status = status
        self.reportedAt = reportedAt
    }

    /// The most bytes of a status kept.
    public static let maxStatusBytes = 256

    /// `status` cut to `maxStatusBytes` on a character boundary.
    public static func clipped(_ status: String) -> String {
        guard status.utf8.count > maxStatusBytes else { return status }
        var cut = ""
        for character in status {
            if cut.utf8.count + character.utf8.count > maxStatusBytes { break }
            cut.append(character)
        }
        return cut
    }

    /// `3/250 (1%)`, `3`, or nil without a count.
    public var countText: String? {
        guard let completed else { return nil }
        guard let total, total > 0 else { return "\(completed)" }
        return "\(completed)/\(total) (\(min(100, max(0, completed * 100 / total)))%)"
    }
}
