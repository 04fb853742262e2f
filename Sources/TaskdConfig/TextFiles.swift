#if canImport(Glibc)
    import Glibc
#endif

/// Small file-system reads the loader needs, on plain libc.
enum TextFiles {
    /// The file's contents as UTF-8 text (invalid bytes replaced), or nil with the errno text.
    static func read(_ path: String) -> Result<String, FileError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(FileError(path: path, errno: errno)) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(FileError(path: path, errno: errno))
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return .success(String(decoding: bytes, as: UTF8.self))
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
}

/// A file that could not be read.
struct FileError: Error, CustomStringConvertible {
    var path: String
    var errno: Int32
    var description: String { String(cString: strerror(errno)) }
}
