/// How the output of a run the keeper holds reaches the journal: taskd makes the entries of its
/// lines, the keeper writes them and then takes the lines' bytes out of the pipe, so a taskd that
/// dies between reading and journaling loses no line and writes none twice.
public struct KeptOutput: Sendable {
    /// The entries for these lines (or counts of dropped lines), as the keeper writes them:
    /// journald datagrams, or lines of text for standard error (`text`).
    public var records: @Sendable ([CommandOutput]) -> (records: [[UInt8]], text: Bool)
    /// Calls `body` once taskd's own entries sent before are handed on (the run's start is
    /// journaled before its first line).
    public var afterOwnEntries: @Sendable (@escaping @Sendable () -> Void) -> Void

    public init(
        records: @escaping @Sendable ([CommandOutput]) -> (records: [[UInt8]], text: Bool),
        afterOwnEntries: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.records = records
        self.afterOwnEntries = afterOwnEntries
    }
}
