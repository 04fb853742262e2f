import TaskdIO
import Testing

@testable import TaskdDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The state folder's format version: read up to `current`, stamped, a newer one refused.
struct StateFormatTests {
    static func stamp(_ directory: String) -> String? {
        guard case .success(let bytes) = FileIO.read(directory + "/format") else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("a folder without the file is of version 1: accepted and stamped with the current version")
    func unstampedFolder() {
        let directory = StateStoreTests.folder()
        #expect(StateFormat.check(directory: directory) == nil)
        #expect(Self.stamp(directory) == "\(StateFormat.current)\n")
        // Checked again, it is left as it is.
        #expect(StateFormat.check(directory: directory) == nil)
        #expect(Self.stamp(directory) == "\(StateFormat.current)\n")
    }

    @Test("the current version, with or without white space around it, is accepted")
    func currentVersion() {
        let directory = StateStoreTests.folder()
        _ = FileIO.replace(directory + "/format", with: Array(" \(StateFormat.current) \n\n".utf8))
        #expect(StateFormat.check(directory: directory) == nil)
    }

    @Test("a newer version is refused, naming the file, its version and what this taskd reads")
    func newerVersion() {
        let directory = StateStoreTests.folder()
        _ = FileIO.replace(directory + "/format", with: Array("\(StateFormat.current + 1)\n".utf8))
        let refusal = StateFormat.check(directory: directory)
        #expect(refusal == .newer(path: directory + "/format", version: StateFormat.current + 1))
        let text = refusal.map { "\($0)" } ?? ""
        #expect(text.contains(directory + "/format"))
        #expect(text.contains("format \(StateFormat.current + 1)"))
        #expect(text.contains("up to \(StateFormat.current)"))
        // Refused, the folder is not touched.
        #expect(Self.stamp(directory) == "\(StateFormat.current + 1)\n")
    }

    @Test(
        "a file that holds no version number is refused with what it holds",
        arguments: ["", "two", "0", "-1", "1.5"])
    func noNumber(content: String) {
        let directory = StateStoreTests.folder()
        _ = FileIO.replace(directory + "/format", with: Array(content.utf8))
        #expect(StateFormat.check(directory: directory) == .unreadable(path: directory + "/format", content: content))
    }

    @Test("a file that cannot be read is a failure to report, not a refusal")
    func unreadableFile() {
        let directory = StateStoreTests.folder()
        #expect(mkdir(directory + "/format", 0o755) == 0)  // reading it fails with EISDIR
        guard case .failed(let path, _)? = StateFormat.check(directory: directory) else {
            Issue.record("a folder named format was read as a version")
            return
        }
        #expect(path == directory + "/format")
    }
}
