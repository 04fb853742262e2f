import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// A list of runs a taskd left in its state folder for the next start (`cut-runs.json`,
/// `active-runs.json`): read once, then removed.
enum RunListFile {
    /// The list at `path` (none if there is no file), the file removed; and what was wrong with
    /// it, if it could not be read, ending with `lost` (what that means for the runs).
    static func take<Element: Decodable>(_ path: String, lost: String) -> (runs: [Element], problem: String?) {
        let bytes: [UInt8]
        switch FileIO.read(path) {
        case .success(let b): bytes = b
        case .failure(let error) where error.errno == ENOENT: return ([], nil)
        case .failure(let error): return ([], "\(path): \(error)")
        }
        unlink(path)
        do {
            return (try JSONValueDecoder().decode([Element].self, from: String(decoding: bytes, as: UTF8.self)), nil)
        } catch {
            return ([], "\(path): \(JSONValueDecoder.describe(error)); \(lost)")
        }
    }
}
