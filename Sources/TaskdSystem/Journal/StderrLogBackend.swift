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

    public func keeps(priority: Int) -> Bool { priority <= maxPriority }

    /// Writes the lines of `entries` with one write.
    public func send(batch entries: ArraySlice<LogEntry>) {
        let text = entries.compactMap(line).joined()
        if !text.isEmpty { FileIO.writeAll(2, Array(text)) }
    }

    /// Each entry's line, as `send` writes it.
    public func encoded(_ entries: [LogEntry]) -> (records: [[UInt8]], text: Bool)? {
        (entries.compactMap(line), true)
    }

    /// The entry's text and its newline; nil above `maxPriority`.
    private func line(_ entry: LogEntry) -> [UInt8]? {
        guard entry.priority <= maxPriority else { return nil }
        let line: String
        if entry["TASK_STREAM"] != nil, let task = entry["TASK"] {
            let run = entry["TASK_RUN_ID"].map { String($0.prefix(8)) } ?? "?"
            line = "\(task)[\(run)]: \(entry.message)"
        } else {
            line = "\(name): \(entry.message)"
        }
        // Most messages are one line: only those with more are split and indented.
        var text = Array((line.utf8.contains(10) ? line.replacingOccurrences(of: "\n", with: "\n    ") : line).utf8)
        text.append(10)
        return text
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
