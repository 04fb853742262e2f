/// One problem found in configuration, always with its file:line and, when it concerns a key, the key.
public struct ConfigDiagnostic: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Severity: String, Sendable { case error, warning }

    public var location: SourceLocation
    public var key: String?
    public var message: String
    public var severity: Severity

    public init(_ location: SourceLocation, key: String? = nil, _ message: String, severity: Severity = .error) {
        self.location = location
        self.key = key
        self.message = message
        self.severity = severity
    }

    /// `file:line: error: Key=: message`
    public var description: String {
        "\(location): \(severity.rawValue): " + (key.map { "\($0)=: " } ?? "") + message
    }
}
