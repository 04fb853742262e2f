import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// The state folder's format version, in its file `format`: checked before anything in the folder
/// is read. This taskd reads every version up to `current` (a folder without the file is of version
/// 1, written before the file existed) and stamps an older folder with `current` once it has checked
/// it; it refuses a folder of a newer version, which it would misread, and says which.
enum StateFormat {
    /// The version this taskd writes. Raise it when a record changes so that an older taskd would
    /// misread it, and teach `check` to read the older ones.
    static let current = 1

    /// The file, in the state folder, that holds the version.
    static let fileName = "format"

    /// Why a state folder cannot be used.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        /// The folder is of a version this taskd does not know.
        case newer(path: String, version: Int)
        /// The file holds no version number.
        case unreadable(path: String, content: String)
        /// The file could not be read or written.
        case failed(path: String, reason: String)

        var description: String {
            switch self {
            case .newer(let path, let version):
                return "\(path): the state folder is of format \(version), written by a newer taskd; this taskd reads "
                    + "formats up to \(StateFormat.current) and will not misread it: run the newer taskd, or point "
                    + "StateDirectory= at another folder"
            case .unreadable(let path, let content):
                return "\(path): expected a format version number, found \"\(content)\""
            case .failed(let path, let reason):
                return "\(path): \(reason)"
            }
        }
    }

    /// Checks the folder's version, and stamps it with `current` if it is older or unstamped;
    /// the refusal if this taskd must not use the folder.
    static func check(directory: String) -> Refusal? {
        let path = directory + "/" + fileName
        var found = 1
        var stamped = false
        switch FileIO.read(path) {
        case .success(let bytes):
            stamped = true
            let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
            guard let version = Int(text), version >= 1 else { return .unreadable(path: path, content: text) }
            found = version
        case .failure(let error) where error.errno == ENOENT:
            break
        case .failure(let error):
            return .failed(path: path, reason: "cannot read (\(error))")
        }
        if found > current { return .newer(path: path, version: found) }
        if found == current && stamped { return nil }
        if let error = FileIO.replace(path, with: Array("\(current)\n".utf8)) {
            return .failed(path: path, reason: "cannot write (\(error))")
        }
        return nil
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
