/// Where log entries go: the journal, standard error, or a test's collector.
public protocol LogBackend: Sendable {
    func send(_ entry: LogEntry)

    /// Sends `entries` in order; by default one by one. A backend overrides it when it does better
    /// with many at once (one write, one check for journald).
    func send(batch entries: ArraySlice<LogEntry>)

    /// Sends the entry `make` returns, in order with the others; by default made at once. A queued
    /// backend makes it on its own thread, so the caller does not pay for the formatting.
    func send(lazy make: @escaping @Sendable () -> LogEntry)

    /// Calls `body` once every entry sent before this call has been handed on (to journald, to
    /// standard error, …); by default at once, for a backend that hands entries on as it is sent them.
    func whenHandedOn(_ body: @escaping @Sendable () -> Void)

    /// `entries` as bytes another process writes for this backend (the run keeper): journald
    /// datagrams, or lines of text for standard error (`text`); nil if this backend has no such form.
    func encoded(_ entries: [LogEntry]) -> (records: [[UInt8]], text: Bool)?

    /// Whether an entry of `priority` would be kept; by default every one is (journald filters by
    /// its own `MaxLevelStore=`). A sender may skip formatting an entry that would not be.
    func keeps(priority: Int) -> Bool
}

extension LogBackend {
    public func send(lazy make: @escaping @Sendable () -> LogEntry) { send(make()) }

    public func send(batch entries: ArraySlice<LogEntry>) {
        for entry in entries { send(entry) }
    }

    public func whenHandedOn(_ body: @escaping @Sendable () -> Void) { body() }

    public func encoded(_ entries: [LogEntry]) -> (records: [[UInt8]], text: Bool)? { nil }

    public func keeps(priority: Int) -> Bool { true }
}
