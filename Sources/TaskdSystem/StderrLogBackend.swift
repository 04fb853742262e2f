import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Writes entries to standard error as text, one line each: `taskd: <message>`, and
/// `TASK[run]: <line>` for handler output; continuation lines of a message are indented.
/// Entries above `maxPriority` (debug, by default) are left out.
public struct StderrLogBackend: LogBackend {
    public var maxPriority: Int

    public init(maxPriority: Int = 6) { self.maxPriority = maxPriority }

    public func send(_ entry: LogEntry) {
        guard entry.priority <= maxPriority else { return }
        var line: String
        if entry["TASK_STREAM"] != nil, let task = entry["TASK"] {
            let run = entry["TASK_RUN_ID"].map { String($0.prefix(8)) } ?? "?"
            line = "\(task)[\(run)]: \(entry.message)"
        } else {
            line = "taskd: \(entry.message)"
        }
        line = line.replacingOccurrences(of: "\n", with: "\n    ") + "\n"
        FileIO.writeAll(2, Array(line.utf8))
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
