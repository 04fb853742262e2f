/// Where log entries go: the journal, standard error, or a test's collector.
public protocol LogBackend: Sendable {
    func send(_ entry: LogEntry)
}
