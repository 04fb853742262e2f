import Testing

@testable import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file writes: `rewrite` replaces a file atomically and reuses its two inodes.
struct FileIOTests {
    static func folder() -> String {
        var template = Array("/tmp/taskd-fileio-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    static func text(_ path: String) -> String? {
        guard case .success(let bytes) = FileIO.read(path) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("rewrite: each write is the whole file, and after the first two no inode is created")
    func rewriteReusesInodes() {
        let path = Self.folder() + "/list.json"
        #expect(FileIO.rewrite(path, with: Array("first".utf8)) == nil)
        #expect(Self.text(path) == "first" && Self.inode(path + ".tmp") == nil, "the first write renames")
        #expect(FileIO.rewrite(path, with: Array("second, longer".utf8)) == nil)
        let inodes = Set([Self.inode(path), Self.inode(path + ".tmp")].compactMap { $0 })
        #expect(inodes.count == 2)
        for i in 0..<20 {
            #expect(FileIO.rewrite(path, with: Array("write \(i)".utf8)) == nil)
            #expect(Self.text(path) == "write \(i)", "shorter than the last: truncated")
        }
        #expect(Set([Self.inode(path), Self.inode(path + ".tmp")].compactMap { $0 }) == inodes)
        #expect(FileIO.remove(path) == nil)
        #expect(Self.inode(path) == nil && Self.inode(path + ".tmp") == nil)
        #expect(FileIO.remove(path) == nil, "nothing to remove is no error")
    }

    @Test("rewrite: a temporary that cannot be written is reported, and the file is left as it was")
    func rewriteFailure() {
        let path = Self.folder() + "/list.json"
        #expect(FileIO.rewrite(path, with: Array("kept".utf8)) == nil)
        mkdir(path + ".tmp", 0o755)
        #expect(FileIO.rewrite(path, with: Array("lost".utf8))?.errno == EISDIR)
        #expect(Self.text(path) == "kept")
    }

    @Test("read: a file whole, whatever its size says (regular, empty, larger than a chunk, /proc's size 0)")
    func readWhole() throws {
        let folder = Self.folder()
        for count in [0, 1, 511, 4096, 70_000, 200_001] {
            let path = folder + "/file-\(count)"
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
            #expect(FileIO.rewrite(path, with: bytes) == nil)
            #expect(try FileIO.read(path).get() == bytes, "\(count) bytes")
        }
        // /proc/self/maps says size 0 and is read a page at a time; its last line is the vsyscall's.
        let maps = String(decoding: try FileIO.read("/proc/self/maps").get(), as: UTF8.self)
        #expect(maps.hasSuffix("\n") && maps.split(separator: "\n").count > 10, "\(maps.suffix(200))")
        #expect(FileIO.read(folder + "/none") == .failure(FileIOError(errno: ENOENT)))
        #expect(FileIO.read(folder) == .failure(FileIOError(errno: EISDIR)))
    }
}
