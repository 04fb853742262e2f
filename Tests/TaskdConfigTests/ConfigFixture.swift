import Foundation

/// A temporary configuration directory, removed when the fixture is released.
final class ConfigFixture {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "taskd-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/tasks.d", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Writes `text` at `path` relative to the directory, creating folders.
    @discardableResult
    func write(_ path: String, _ text: String) throws -> String {
        let full = directory + "/" + path
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: full, atomically: true, encoding: .utf8)
        return full
    }
}
