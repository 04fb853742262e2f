import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Small file-system reads the loader needs, on plain libc.
enum TextFiles {
    /// The file's contents as UTF-8 text (invalid bytes replaced), or nil with the errno text.
    static func read(_ path: String) -> Result<String, FileIOError> {
        FileIO.read(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Names in a directory ending with `suffix`, sorted; nil if it cannot be opened.
    static func list(_ directory: String, suffix: String) -> [String]? {
        guard let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name.hasSuffix(suffix), !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Whether `path` is a directory that can be read.
    static func isDirectory(_ path: String) -> Bool {
        guard let dir = opendir(path) else { return false }
        closedir(dir)
        return true
    }
}
