import Dispatch
import Synchronization
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The runs in progress, kept in the state folder as `active-runs.json` for a taskd that did not
/// stop cleanly (a crash, `kill -9`): the next start records each one whose end it never saw
/// (outcome `failed`, `failureReason` `lost`) instead of dropping it. Rewritten off the event
/// loop, without an fsync (a crash of taskd keeps the page cache), the latest list only.
package final class ActiveRunsFile: Sendable {
    let path: String
    private let queue = DispatchQueue(label: "taskd.active-runs")
    /// The list waiting to be written, and whether the queue is writing.
    private let waiting = Mutex<(runs: [RunSnapshot]?, writing: Bool)>((nil, false))
    private let onProblem: @Sendable (String) -> Void

    package init(directory: String, onProblem: @escaping @Sendable (String) -> Void) {
        path = directory + "/active-runs.json"
        self.onProblem = onProblem
    }

    /// Records `runs` as the runs in progress now; returns at once.
    func save(_ runs: [RunSnapshot]) {
        let start = waiting.withLock { w in
            w.runs = runs
            defer { w.writing = true }
            return !w.writing
        }
        if start { queue.async { self.write() } }
    }

    private func write() {
        while let runs = waiting.withLock({ w -> [RunSnapshot]? in
            defer { w.runs = nil }
            if w.runs == nil { w.writing = false }
            return w.runs
        }) {
            if runs.isEmpty {
                if unlink(path) != 0 && errno != ENOENT { onProblem("\(path): \(String(cString: strerror(errno)))") }
                continue
            }
            do {
                let text = try JSONValueEncoder().encode(runs).description
                if let error = FileIO.replace(path, with: Array(text.utf8), sync: false) {
                    onProblem("\(path): \(error)")
                }
            } catch {
                onProblem("\(path): \(error)")
            }
        }
    }

    /// Waits until the latest list is written.
    func flush() { queue.sync {} }

    /// The runs that were in progress when the previous taskd stopped without ending them, the file
    /// removed; and what was wrong with it, if it could not be read.
    static func take(directory: String) -> (runs: [RunSnapshot], problem: String?) {
        let path = directory + "/active-runs.json"
        let bytes: [UInt8]
        switch FileIO.read(path) {
        case .success(let b): bytes = b
        case .failure(let error) where error.errno == ENOENT: return ([], nil)
        case .failure(let error): return ([], "\(path): \(error)")
        }
        unlink(path)
        do {
            return (
                try JSONValueDecoder().decode([RunSnapshot].self, from: String(decoding: bytes, as: UTF8.self)), nil
            )
        } catch {
            return ([], "\(path): \(JSONValueDecoder.describe(error)); the runs it named are not recorded")
        }
    }
}
