/// Where a definition came from, as a folder and a name: a task file's folder is stored once per
/// load (`SharedValues`) and a name of up to 15 bytes needs no storage of its own, where the whole
/// path was one allocation per task (about 80 bytes at 10,000 tasks). "swift": registered in code.
public struct SourcePath: Hashable, Sendable, CustomStringConvertible {
    /// Everything before the last "/" (nil when the path has none).
    var folder: String?
    var name: String

    public init(_ path: String) {
        if let slash = path.lastIndex(of: "/") {
            folder = String(path[..<slash])
            name = String(path[path.index(after: slash)...])
        } else {
            folder = nil
            name = path
        }
    }

    /// The path as it was given.
    public var description: String { folder.map { $0 + "/" + name } ?? name }
}
