@preconcurrency import Dispatch
import TaskScheduling
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the last trigger time of `Persistent=yes` tasks in `STATE/timers/KIND:IDENTIFIER`
/// (CLOCK_REALTIME µs as text). Writes are atomic (temporary file, fsync, rename, fsync of the
/// folder) and happen on a serial queue, never on the cooperative pool.
struct TriggerStore: Sendable {
    let directory: String
    private let queue = DispatchQueue(label: "taskd.trigger-store")

    init(stateDirectory: String) { directory = stateDirectory + "/timers" }

    /// The stored triggers of `keys`, and a message for each file that exists but cannot be used.
    func load(_ keys: [TaskKey]) async -> (triggers: [TaskKey: UInt64], problems: [String]) {
        await withCheckedContinuation { continuation in
            queue.async {
                var triggers: [TaskKey: UInt64] = [:]
                var problems: [String] = []
                for key in keys {
                    let path = self.path(key)
                    guard case .success(let bytes) = FileIO.read(path) else { continue }
                    let text = String(decoding: bytes, as: UTF8.self)
                    let trimmed = text.split(separator: "\n").first.map(String.init) ?? ""
                    if let value = UInt64(trimmed) {
                        triggers[key] = value
                    } else {
                        problems.append("\(path): not a timestamp ('\(trimmed.prefix(40))'); ignored")
                    }
                }
                continuation.resume(returning: (triggers, problems))
            }
        }
    }

    /// Records `realtime` as the task's last trigger; `onError` gets a message if it cannot.
    func save(_ key: TaskKey, _ realtime: UInt64, onError: @escaping @Sendable (String) -> Void) {
        queue.async {
            mkdir(directory, 0o755)
            let path = self.path(key)
            let temporary = path + ".tmp"
            let text = "\(realtime)\n"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return onError("\(temporary): \(String(cString: strerror(errno)))") }
            let written = FileIO.writeAll(fd, Array(text.utf8))
            let synced = fsync(fd) == 0
            close(fd)
            guard written, synced, rename(temporary, path) == 0 else {
                unlink(temporary)
                return onError("\(path): \(String(cString: strerror(errno)))")
            }
            let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dir >= 0 {
                fsync(dir)
                close(dir)
            }
        }
    }

    func path(_ key: TaskKey) -> String { directory + "/" + key.description }
}
