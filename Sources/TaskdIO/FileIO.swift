import CTaskdShim

#if canImport(Glibc)
    import Glibc
#endif

/// Whole-buffer writes and whole-file reads on plain file descriptors.
public enum FileIO {
    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR; false (errno set) on failure.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        writeAll(fd, bytes, at: nil)
    }

    /// Writes all of `bytes` to `fd` at `position` (`pwrite`; the file offset is left alone), or at
    /// the file offset when `position` is nil; false (errno set) on failure.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], at position: Int?) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { buffer in
                if let position { return pwrite(fd, buffer.baseAddress, buffer.count, off_t(position + offset)) }
                return write(fd, buffer.baseAddress, buffer.count)
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Replaces `path` with `bytes` atomically: a temporary file beside it, written (and fsynced if `sync`),
    /// then renamed over it. The folder is not synced (see `syncDirectory`), so a batch syncs it once.
    public static func replace(_ path: String, with bytes: [UInt8], sync: Bool = true) -> FileIOError? {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return FileIOError(errno: errno) }
        let ok = writeAll(fd, bytes) && (!sync || fsync(fd) == 0)
        let failure = errno
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            let error = FileIOError(errno: ok ? errno : failure)
            unlink(temporary)
            return error
        }
        return nil
    }

    /// Replaces `path` with `bytes` atomically, for a file rewritten many times a second: the bytes
    /// go into `path.tmp`, which is then exchanged with `path` (renameat2 `RENAME_EXCHANGE`), so
    /// `path.tmp` keeps the previous contents and is truncated and reused by the next call. No inode
    /// is created or freed per write: ext4 spends up to a millisecond finding a free inode among
    /// many freed recently. Not synced. Where `path` does not exist yet, or the file system cannot
    /// exchange, the temporary is renamed over it as `replace` does. `remove` deletes both files.
    public static func rewrite(_ path: String, with bytes: [UInt8]) -> FileIOError? {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return FileIOError(errno: errno) }
        let ok = writeAll(fd, bytes)
        let failure = errno
        close(fd)
        guard ok else {
            unlink(temporary)
            return FileIOError(errno: failure)
        }
        if taskd_exchange(temporary, path) == 0 { return nil }
        guard rename(temporary, path) == 0 else {
            let error = FileIOError(errno: errno)
            unlink(temporary)
            return error
        }
        return nil
    }

    /// Deletes what `rewrite` keeps: `path` and `path.tmp`. An error other than "no such file".
    public static func remove(_ path: String) -> FileIOError? {
        for file in [path, path + ".tmp"] where unlink(file) != 0 && errno != ENOENT {
            return FileIOError(errno: errno)
        }
        return nil
    }

    /// fsyncs a folder, so that the renames and creations in it are durable.
    @discardableResult
    public static func syncDirectory(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return fsync(fd) == 0
    }

    /// The whole file at `path`, or the errno that stopped the read.
    public static func read(_ path: String) -> Result<[UInt8], FileIOError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(FileIOError(errno: errno)) }
        defer { close(fd) }
        // Chunks read into uninitialized memory (no zeroing): the first sized by `fstat`, one byte
        // over so that the read is short, and after a short read a small one to see the end.
        // Files in /proc and /sys say size 0: read 4 KiB, then 64 KiB at a time.
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        var room = size > 0 ? size + 1 : 4096
        var bytes: [UInt8] = []
        while true {
            var failure: Int32 = 0
            let chunk = [UInt8](unsafeUninitializedCapacity: room) { buffer, count in
                let n = Glibc.read(fd, buffer.baseAddress, room)
                if n < 0 { failure = errno }
                count = max(n, 0)
            }
            if failure == EINTR { continue }
            if failure != 0 { return .failure(FileIOError(errno: failure)) }
            if chunk.isEmpty { return .success(bytes) }
            if bytes.isEmpty { bytes = chunk } else { bytes += chunk }
            room = chunk.count < room ? 512 : max(room, 65536)
        }
    }
}

/// A failed read, with its errno and the text of it.
public struct FileIOError: Error, Hashable, Sendable, CustomStringConvertible {
    public var errno: Int32
    public var description: String { String(cString: strerror(errno)) }
}
