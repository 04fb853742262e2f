/// One structured log event: journal fields in order (`MESSAGE`, `PRIORITY`, `TASK`, …).
public struct LogEntry: Hashable, Sendable {
    public var fields: [(key: String, value: String)]
    /// May be dropped when the journal falls behind (handler output); taskd's own events may not.
    public var sheddable = false

    public init(_ fields: [(key: String, value: String)] = []) { self.fields = fields }

    public subscript(key: String) -> String? { fields.last { $0.key == key }?.value }

    public mutating func set(_ key: String, _ value: String) { fields.append((key, value)) }

    public var message: String { self["MESSAGE"] ?? "" }
    public var priority: Int { Int(self["PRIORITY"] ?? "6") ?? 6 }

    public static func == (a: LogEntry, b: LogEntry) -> Bool {
        a.fields.map(\.key) == b.fields.map(\.key) && a.fields.map(\.value) == b.fields.map(\.value)
    }
    public func hash(into h: inout Hasher) {
        for f in fields {
            h.combine(f.key)
            h.combine(f.value)
        }
    }
}
