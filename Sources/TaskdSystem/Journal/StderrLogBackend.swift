import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Writes entries to standard error as text, one line each: `NAME: <message>`, and
/// `TASK[run]: <line>` for handler output; continuation lines of a message are indented.
/// Entries above `maxPriority` (debug, by default) are left out.
public struct StderrLogBackend: LogBackend {
    public var maxPriority: Int
    /// The daemon's name, before each of its own messages.
    public var name: String

    public init(maxPriority: Int = 6, name: String = "taskd") {
        self.maxPriority = maxPriority
        self.name = name
    }

    public func send(_ entry: LogEntry) { send(batch: [entry]) }

    /// Writes the lines of `entries` with one write.
    public func send(batch entries: ArraySlice<LogEntry>) {
        var text: [UInt8] = []
        for entry in entries where entry.priority <= maxPriority {
            let line: String
            if entry["TASK_STREAM"] != nil, let task = entry["TASK"] {
                let run = entry["TASK_RUN_ID"].map { String($0.prefix(8)) } ?? "?"
                line = "\(task)[\(run)]: \(entry.message)"
            } else {
                line = "\(name): \(entry.message)"
            }
            // Most messages are one line: only those with more are split and indented.
            text += (line.utf8.contains(10) ? line.replacingOccurrences(of: "\n", with: "\n    ") : line).utf8
            text.append(10)
        }
        if !text.isEmpty { FileIO.writeAll(2, text) }
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
