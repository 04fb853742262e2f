/// Where log entries go: the journal, standard error, or a test's collector.
public protocol LogBackend: Sendable {
    func send(_ entry: LogEntry)

    /// Sends `entries` in order; by default one by one. A backend overrides it when it does better
    /// with many at once (one write, one check for journald).
    func send(batch entries: ArraySlice<LogEntry>)
}

extension LogBackend {
    public func send(batch entries: ArraySlice<LogEntry>) {
        for entry in entries { send(entry) }
    }
}
