import TaskdProtocol

/// A line a command writes to its notify descriptor (`TASKD_NOTIFY_FD`): `PROGRESS=N/TOTAL`,
/// `PROGRESS=N` (total unknown), `STATUS=text`, `RESULT=value` or `CHECKPOINT=text`, as `sd_notify`'s assignments.
/// Anything else is ignored, as `sd_notify` ignores assignments it does not know.
enum NotifyLine {
    /// The longest `RESULT=` value kept, in bytes; a longer one is ignored.
    static let resultLimit = 65536

    static func parse(_ line: Substring) -> ProgressMailbox.Report? {
        if line.hasPrefix("STATUS=") { return ProgressMailbox.Report(status: String(line.dropFirst(7))) }
        if line.hasPrefix("RESULT=") {
            // JSON as given; any other text as a JSON string. The last one given is the run's result.
            let value = line.dropFirst(7)
            guard value.utf8.count <= resultLimit else { return nil }
            let json = (try? JSONParser.parse(Array(value.utf8))) ?? .string(String(value))
            return ProgressMailbox.Report(result: json.description)
        }
        if line.hasPrefix("CHECKPOINT=") {
            // Kept as given, for the next run's TASKD_CHECKPOINT.
            return ProgressMailbox.Report(checkpoint: String(line.dropFirst(11)))
        }
        guard line.hasPrefix("PROGRESS=") else { return nil }
        let value = line.dropFirst(9)
        let parts = value.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let completed = Int64(parts[0]), completed >= 0 else { return nil }
        guard parts.count == 2 else { return ProgressMailbox.Report(completed: completed) }
        guard let total = Int64(parts[1]), total >= 0 else { return nil }
        return ProgressMailbox.Report(completed: completed, total: total)
    }
}
