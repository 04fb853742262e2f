import CSystemd
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Sends entries to journald with `sd_journal_sendv`. `sd_journal_sendv` returns 0 and drops the
/// entry when no journald listens, so each send (each batch: `QueuedLogBackend.slice` entries at
/// most) first checks for the socket; without it (or on a send error) the entries go to the fallback
/// instead, and journald is used again once it returns.
public struct JournalLogBackend: LogBackend {
    public static let socketPath = "/run/systemd/journal/socket"

    let fallback: any LogBackend
    let identifier: String
    /// Whether journald listened at the last check (a batch's): what `keeps` answers by, with no
    /// system call.
    private let listened: Flag

    public init(identifier: String = "taskd", fallback: any LogBackend = StderrLogBackend()) {
        self.identifier = identifier
        self.fallback = fallback
        self.listened = Flag(Self.isAvailable)
    }

    /// True when a journald socket exists at the standard path.
    public static var isAvailable: Bool { access(socketPath, F_OK) == 0 }

    public func send(_ entry: LogEntry) { send(batch: [entry]) }

    /// Checks for journald once for the whole batch.
    public func send(batch entries: ArraySlice<LogEntry>) {
        guard check() else { return fallback.send(batch: entries) }
        for entry in entries { sendToJournal(entry) }
    }

    /// Datagrams in journald's native protocol, if journald listens (else the fallback's form).
    public func encoded(_ entries: [LogEntry]) -> (records: [[UInt8]], text: Bool)? {
        guard check() else { return fallback.encoded(entries) }
        return (entries.map(datagram), false)
    }

    /// journald keeps every priority (its `MaxLevelStore=` decides); without it, the fallback decides.
    public func keeps(priority: Int) -> Bool {
        listened.value.load(ordering: .relaxed) || fallback.keeps(priority: priority)
    }

    private func check() -> Bool {
        let available = Self.isAvailable
        listened.value.store(available, ordering: .relaxed)
        return available
    }

    private final class Flag: Sendable {
        let value: Atomic<Bool>
        init(_ value: Bool) { self.value = Atomic(value) }
    }

    /// One entry as journald's native protocol has it: `KEY=value` lines, and a value that holds a
    /// newline as `KEY`, its length (64-bit little-endian) and its bytes.
    func datagram(_ entry: LogEntry) -> [UInt8] {
        var bytes: [UInt8] = []
        var fields = entry.fields
        if entry["SYSLOG_IDENTIFIER"] == nil { fields.append(("SYSLOG_IDENTIFIER", identifier)) }
        for (key, value) in fields {
            bytes += key.utf8
            if value.utf8.contains(10) {
                bytes.append(10)
                withUnsafeBytes(of: UInt64(value.utf8.count).littleEndian) { bytes += $0 }
            } else {
                bytes.append(UInt8(ascii: "="))
            }
            bytes += value.utf8
            bytes.append(10)
        }
        return bytes
    }

    private func sendToJournal(_ entry: LogEntry) {
        var fields = entry.fields
        if entry["SYSLOG_IDENTIFIER"] == nil { fields.append(("SYSLOG_IDENTIFIER", identifier)) }
        let strings = fields.map { strdup("\($0.key)=\($0.value)")! }
        defer { strings.forEach { free($0) } }
        var iov = strings.map { iovec(iov_base: UnsafeMutableRawPointer($0), iov_len: strlen($0)) }
        let rc = sd_journal_sendv(&iov, Int32(iov.count))
        if rc < 0 { fallback.send(entry) }
    }
}
