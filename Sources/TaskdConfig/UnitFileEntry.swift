/// One `Key=Value` assignment of a unit file, with its section and where it stood.
public struct UnitFileEntry: Hashable, Sendable {
    public var section: String
    public var key: String
    public var value: String
    public var location: SourceLocation
}
